! A Fortran solver's first steps with hurray_tensor: read a Matrix Market
! file (symmetric, integer values) as float64, get 1-based CSR, and see the
! library's messages for a missing file and a malformed one.
program read_csr
  use, intrinsic :: iso_c_binding
  use hurray_coo
  implicit none
  type(hurray_tensor) :: t
  integer(c_int32_t) :: st
  integer(c_int32_t), allocatable :: row_ptr(:), col_ind(:)
  real(c_double), allocatable :: values(:)
  integer :: u, fails

  fails = 0
  open (newunit=u, file="read_csr.mtx", status="replace", action="write")
  write (u, '(a)') "%%MatrixMarket matrix coordinate integer symmetric"
  write (u, '(a)') "3 3 4"
  write (u, '(a)') "1 1 4"
  write (u, '(a)') "2 1 -1"
  write (u, '(a)') "3 2 -2"
  write (u, '(a)') "3 3 5"
  close (u)

  call t%read_mtx("read_csr.mtx", st)
  call expect(st == HURRAY_OK, "read_mtx: " // hurray_message())
  call t%csr(row_ptr, col_ind, values, st)
  call expect(st == HURRAY_OK, "csr: " // hurray_message())
  call expect(all(row_ptr == [1, 3, 5, 7]), "row_ptr")
  call expect(all(col_ind == [1, 2, 1, 3, 2, 3]), "col_ind")
  call expect(all(values == [4.0d0, -1.0d0, -1.0d0, -2.0d0, -2.0d0, 5.0d0]), "values")
  print '(a, 3(1x, i0))', "csr:", size(row_ptr), size(col_ind), size(values)
  call t%free()

  call t%read_mtx("no_such_file.mtx", st)
  print '(a)', hurray_status_string(st) // ": " // hurray_message()
  call expect(st == HURRAY_ERR_IO .and. t%is_null(), "missing file")

  open (newunit=u, file="read_csr.mtx", status="replace", action="write")
  write (u, '(a)') "%%MatrixMarket matrix coordinate real general"
  write (u, '(a)') "2 2 1"
  write (u, '(a)') "1 3 1.0"
  close (u)
  call t%read_mtx("read_csr.mtx", st)
  print '(a)', hurray_status_string(st) // ": " // hurray_message()
  call expect(st == HURRAY_ERR_PARSE, "malformed file")
  call t%csr(row_ptr, col_ind, values, st)
  call expect(st == HURRAY_ERR_NULL_POINTER, "csr of nothing: " // hurray_status_string(st))

  if (fails == 0) print '(a)', "fortran read_csr: all checks passed"
  if (fails /= 0) error stop 1

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(a)', "FAILED: " // what
      fails = fails + 1
    end if
  end subroutine expect

end program read_csr
