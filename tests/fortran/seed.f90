! The seed example from Fortran: build, validate, look up (1-based), hit an
! error and print its message, free (twice: idempotent), move ownership.
program seed
  use, intrinsic :: iso_c_binding
  use hurray_coo
  implicit none
  type(hurray_tensor) :: t, u
  integer(c_int32_t) :: st
  integer(c_int64_t) :: shape(2) = [4_c_int64_t, 4_c_int64_t]
  ! 1-based coordinates, one entry per column: (1,2), (3,1), (4,4)
  integer(c_int64_t) :: idx(2, 3) = reshape([1_c_int64_t, 2_c_int64_t, 3_c_int64_t, 1_c_int64_t, &
                                             4_c_int64_t, 4_c_int64_t], [2, 3])
  real(c_float) :: vals(3) = [1.5_c_float, -0.5_c_float, 2.0_c_float]
  real(c_double) :: v
  logical :: found
  type(hurray_error_position) :: where
  integer :: failures = 0

  if (hurray_coo_abi_version() /= HURRAY_COO_ABI_VERSION_VALUE) call fail("ABI version")
  print '(a,a)', "libhurray_coo ", hurray_string(hurray_coo_version_string())

  call t%create(HURRAY_TYPE_FLOAT32, shape, idx, vals, st, sorted=.true.)
  if (st /= HURRAY_OK) call fail("create: " // hurray_message())
  print '(a,i0,a,i0)', "created rank ", t%rank(), " nnz ", t%nnz()
  if (t%validate() /= HURRAY_OK) call fail("validate: " // hurray_message())
  print '(a)', "validate: ok"

  v = t%lookup([3_c_int64_t, 1_c_int64_t], found, st)
  if (st /= HURRAY_OK .or. .not. found .or. v /= -0.5_c_double) call fail("lookup (3,1)")
  print '(a,f5.2)', "(3, 1) = ", v
  v = t%lookup([2_c_int64_t, 2_c_int64_t], found, st)
  if (st /= HURRAY_OK .or. found .or. v /= 0.0_c_double) call fail("lookup (2,2)")
  print '(a,f5.2,a)', "(2, 2) = ", v, " (not stored)"

  ! An error: a coordinate outside the shape, named as written here (1-based).
  v = t%lookup([5_c_int64_t, 1_c_int64_t], found, st)
  if (st /= HURRAY_ERR_INDEX_OUT_OF_BOUNDS) call fail("expected out of bounds")
  print '(a,a,a)', hurray_status_string(st), ": ", hurray_message()
  if (index(hurray_message(), "coordinate 5 in dimension 1 is out of bounds (valid 1 to 4)") &
      == 0) call fail("message")
  v = t%lookup([0_c_int64_t, 1_c_int64_t], found, st)
  if (index(hurray_message(), "coordinate 0 in dimension 1") == 0) call fail("message for 0")

  ! The same place as numbers, counted from 1 as written here.
  where = hurray_error_where()
  if (where%status /= HURRAY_ERR_INDEX_OUT_OF_BOUNDS .or. where%base /= 1) call fail("where: oob")
  if (iand(where%set, HURRAY_POS_DIM) == 0 .or. where%dim /= 1 .or. where%coordinate /= 0) &
    call fail("where: dim and coordinate")

  ! Another: a duplicate coordinate, refused at create.
  idx(:, 3) = idx(:, 2)
  call u%create(HURRAY_TYPE_FLOAT32, shape, idx, vals, st)
  if (st /= HURRAY_ERR_DUPLICATE) call fail("expected duplicate")
  print '(a,a,a)', hurray_status_string(st), ": ", hurray_message()
  if (index(hurray_message(), "entry 3 duplicates entry 2 at (3, 1)") == 0) call fail("dup msg")
  where = hurray_error_where()
  if (where%entry /= 3 .or. where%other_entry /= 2 .or. where%rank /= 2) call fail("where: dup")
  if (where%coordinates(1) /= 3 .or. where%coordinates(2) /= 1) call fail("where: dup coords")
  print '(a,i0,a,i0,a,i0,a,i0,a)', "position: entry ", where%entry, " duplicates entry ", &
    where%other_entry, " at (", where%coordinates(1), ", ", where%coordinates(2), ")"
  ! A parse error: line and column.
  block
    type(c_ptr) :: h
    type(hurray_text_options) :: options
    character(len=*), parameter :: bad = "%%MatrixMarket matrix coordinate real general" // &
                                         char(10) // "2 2 1" // char(10) // "1 3 1" // char(10)
    character(kind=c_char), target :: text(len(bad))
    integer :: k
    do k = 1, len(bad)
      text(k) = bad(k:k)
    end do
    h = c_null_ptr
    options = hurray_text_options(c_sizeof(options), 0, 0, 1, 0, 0)
    st = hurray_coo_read_mtx(c_loc(text), int(len(bad), c_size_t), options, c_null_ptr, h)
    if (st /= HURRAY_ERR_PARSE) call fail("expected a parse error")
    where = hurray_error_where()
    if (where%line /= 3 .or. where%column /= 3) call fail("where: line and column")
    if (iand(where%set, ior(HURRAY_POS_LINE, HURRAY_POS_COLUMN)) /= &
        ior(HURRAY_POS_LINE, HURRAY_POS_COLUMN)) call fail("where: set bits")
    print '(a,i0,a,i0)', "position: line ", where%line, ", column ", where%column
  end block
  if (.not. u%is_null()) call fail("handle after failure")

  ! A type_tag that is not how the values are stored: refused by the module,
  ! never the bits of one type read as another's (real64 as int64 here).
  call u%create(HURRAY_TYPE_INT64, shape, idx(:, 1:2), [1.0_c_double, 2.0_c_double], st)
  if (st /= HURRAY_ERR_INVALID_TYPE) call fail("expected invalid type")
  if (.not. u%is_null()) call fail("handle after a type mismatch")
  print '(a,a,a)', hurray_status_string(st), ": ", hurray_message()
  if (index(hurray_message(), "the values are real64, which store float64 elements, but " // &
            "type_tag is int64; pass HURRAY_TYPE_FLOAT64") == 0) call fail("type message")
  ! The library's next failure is what hurray_message says then.
  v = t%lookup([5_c_int64_t, 1_c_int64_t], found, st)
  if (index(hurray_message(), "coordinate 5 in dimension 1") == 0) call fail("message after")

  ! Ownership moves; free is idempotent.
  call hurray_move(u, t)
  if (.not. t%is_null() .or. u%is_null()) call fail("move")
  call u%free()
  call u%free()
  call t%free()
  if (failures /= 0) error stop "fortran seed test failed"
  print '(a)', "fortran: all checks passed"

contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a,a)', "FAIL: ", what
    failures = failures + 1
  end subroutine fail
end program seed
