! Assembly from Fortran: 1-based int32 triplets, one array per dimension,
! duplicates summed; CSR export in Fortran's own convention (int32, base 1);
! re-assembly of new values through the plan; a 1-based duplicate error.
program assemble
  use, intrinsic :: iso_c_binding
  use hurray_coo
  implicit none
  integer(c_int32_t), target :: rows(6) = [1, 1, 2, 2, 3, 1]
  integer(c_int32_t), target :: cols(6) = [1, 2, 2, 2, 3, 1]
  real(c_double), target :: vals(6) = [1.0d0, 2.0d0, 3.0d0, 4.0d0, 5.0d0, 10.0d0]
  real(c_double), target :: new_vals(6) = [2.0d0, 4.0d0, 6.0d0, 8.0d0, 10.0d0, 20.0d0]
  integer(c_int64_t), target :: shape(2) = [3_c_int64_t, 3_c_int64_t]
  type(c_ptr), target :: dims(2)
  type(hurray_triplets) :: t
  type(c_ptr) :: coo, plan
  integer(c_int32_t), target :: rp(4), ci(4)
  real(c_double), target :: a(4), out(4)
  integer(c_size_t) :: ob, ib, vb
  type(hurray_compressed) :: csr
  type(hurray_text_options) :: text_options
  type(hurray_assemble_options) :: options
  integer(c_int32_t) :: st
  integer :: failures = 0
  type(c_ptr) :: back
  integer(c_int32_t), target :: sym
  character(len=*), parameter :: path = "/tmp/hurray_fortran_assemble.mtx"

  dims(1) = c_loc(rows)
  dims(2) = c_loc(cols)
  t%rank = 2
  t%shape = c_loc(shape)
  t%n = 6
  t%index_type = HURRAY_INDEX_INT32
  t%index_base = 1
  t%indices = c_null_ptr
  t%indices_bytes = 0
  t%dim_indices = c_loc(dims)
  t%dim_indices_bytes = 24
  t%type_tag = HURRAY_TYPE_FLOAT64
  t%values = c_loc(vals)
  t%values_bytes = 48

  ! The ERROR policy names both triplets as written here.
  options = hurray_assemble_options(c_sizeof(options), HURRAY_DUP_ERROR, 0, 1)
  st = hurray_coo_assemble(t, options, coo, plan)
  if (st /= HURRAY_ERR_DUPLICATE) call fail("expected a duplicate")
  if (index(hurray_message(), "triplet 4 duplicates triplet 3 at (2, 2)") == 0) call fail("msg")
  print '(a,a)', "error policy: ", hurray_message()

  options = hurray_assemble_options(c_sizeof(options), HURRAY_DUP_SUM, 0, 2)
  st = hurray_coo_assemble(t, options, coo, plan)
  if (st /= HURRAY_OK) call fail("assemble: " // hurray_message())
  if (hurray_coo_nnz(coo) /= 4) call fail("nnz")

  csr%format = HURRAY_FORMAT_CSR
  csr%index_type = HURRAY_INDEX_INT32
  csr%base = 1
  st = hurray_coo_compressed_size(coo, csr)
  ob = csr%offsets_bytes
  ib = csr%indices_bytes
  vb = csr%values_bytes
  if (st /= HURRAY_OK .or. ob /= 16 .or. ib /= 16 .or. vb /= 32) call fail("sizes")
  csr%offsets = c_loc(rp)
  csr%indices = c_loc(ci)
  csr%values = c_loc(a)
  st = hurray_coo_export_compressed(coo, csr, 1)
  if (st /= HURRAY_OK) call fail("export: " // hurray_message())
  if (any(rp /= [1, 3, 4, 5])) call fail("row pointers")
  if (any(ci /= [1, 2, 2, 3])) call fail("columns")
  if (any(a /= [11.0d0, 2.0d0, 7.0d0, 5.0d0])) call fail("values")
  print '(a,4i3,a,4f6.1)', "CSR (1-based): rows", rp, "  values", a

  st = hurray_assembly_plan_apply(plan, c_loc(new_vals), 48_c_size_t, c_loc(out), 32_c_size_t, 1)
  if (st /= HURRAY_OK .or. any(out /= 2.0d0 * a)) call fail("re-assembly")
  print '(a,4f6.1)', "re-assembled:", out

  ! Matrix Market: write the assembled matrix, read it back.
  text_options = hurray_text_options(c_sizeof(text_options), HURRAY_DUP_ERROR, 0, 1, 0, 0)
  st = hurray_coo_write_mtx_file(coo, trim(path) // c_null_char, text_options)
  if (st /= HURRAY_OK) call fail("write_mtx: " // hurray_message())
  st = hurray_coo_read_mtx_file(trim(path) // c_null_char, text_options, c_loc(sym), back)
  if (st /= HURRAY_OK) call fail("read_mtx: " // hurray_message())
  if (sym /= HURRAY_MTX_GENERAL .or. hurray_coo_nnz(back) /= 4) call fail("mtx round trip")
  call hurray_coo_free(back)
  st = hurray_coo_read_mtx_file("/nonexistent.mtx" // c_null_char, text_options, &
                                c_null_ptr, back)
  if (st /= HURRAY_ERR_IO .or. c_associated(back)) call fail("missing file")
  print '(a)', "Matrix Market round trip: 4 entries"

  call hurray_assembly_plan_free(plan)
  call hurray_coo_free(coo)
  if (failures /= 0) error stop "fortran assemble test failed"
  print '(a)', "fortran assemble: all checks passed"

contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a,a)', "FAIL: ", what
    failures = failures + 1
  end subroutine fail
end program assemble
