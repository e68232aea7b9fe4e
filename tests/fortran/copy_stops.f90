! Copying a hurray_tensor must stop the program loudly (a copy would free the
! handle twice).
program copy_stops
  use, intrinsic :: iso_c_binding
  use hurray_coo
  implicit none
  type(hurray_tensor) :: a, b
  integer(c_int32_t) :: st
  integer(c_int64_t) :: idx(1, 1) = reshape([1_c_int64_t], [1, 1])
  call a%create(HURRAY_TYPE_FLOAT64, [3_c_int64_t], idx, [1.0_c_double], st)
  if (st /= HURRAY_OK) error stop "create failed"
  b = a
  print '(a)', "NOT REACHED"
  call a%free()
  call b%free()
end program copy_stops
