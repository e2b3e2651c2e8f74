! fring: a Fortran (use mpi) ring exchange, to check that Fortran MPI calls are traced.
! Per iteration: Irecv from the left + Isend to the right + Waitall, a blocking Send/Recv
! gather to rank 0 with MPI_ANY_SOURCE, and an Allreduce. Then Bcast, Reduce, a row split and
! Barrier. With --report-calls rank 0 prints the calls of every rank ("calls" lines).
program fring
  use mpi
  implicit none
  integer, parameter :: nk = 15
  character(len=16), parameter :: names(nk) = [character(len=16) :: 'MPI_Init', &
       'MPI_Comm_rank', 'MPI_Comm_size', 'MPI_Isend', 'MPI_Irecv', 'MPI_Waitall', 'MPI_Send', &
       'MPI_Recv', 'MPI_Allreduce', 'MPI_Bcast', 'MPI_Reduce', 'MPI_Comm_split', &
       'MPI_Comm_free', 'MPI_Barrier', 'MPI_Gather']
  integer :: counts(nk), allc(nk, 64)
  integer :: ierr, rank, size, left, right, it, iters, k, sub, n
  integer :: reqs(2), st(MPI_STATUS_SIZE)
  double precision :: x(100), y(100), s, tot
  character(len=32) :: arg
  logical :: report

  counts = 0
  iters = 20
  report = .false.
  do k = 1, command_argument_count()
     call get_command_argument(k, arg)
     if (arg == '--help') then
        print '(a)', 'usage: fring [--report-calls]   (Fortran ring exchange, 20 iterations)'
        stop
     end if
     if (arg == '--report-calls') report = .true.
  end do
  call MPI_Init(ierr); call cnt(1)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr); call cnt(2)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr); call cnt(3)
  left = mod(rank + size - 1, size)
  right = mod(rank + 1, size)
  x = rank
  s = 0
  do it = 1, iters
     call MPI_Irecv(y, 100, MPI_DOUBLE_PRECISION, left, it, MPI_COMM_WORLD, reqs(1), ierr)
     call cnt(5)
     call MPI_Isend(x, 100, MPI_DOUBLE_PRECISION, right, it, MPI_COMM_WORLD, reqs(2), ierr)
     call cnt(4)
     call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr); call cnt(6)
     x = 0.5d0 * (x + y) + it
     if (rank == 0) then
        do k = 1, size - 1
           call MPI_Recv(y, 100, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, st, &
                ierr); call cnt(8)
           s = s + y(1) * (st(MPI_SOURCE) + 1)
        end do
     else
        call MPI_Send(x, 100, MPI_DOUBLE_PRECISION, 0, 7, MPI_COMM_WORLD, ierr); call cnt(7)
     end if
     call MPI_Allreduce(x(1), tot, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
     call cnt(9)
  end do
  call MPI_Bcast(s, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr); call cnt(10)
  call MPI_Reduce(x(1), tot, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call cnt(11)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, sub, ierr); call cnt(12)
  call MPI_Barrier(sub, ierr); call cnt(14)
  call MPI_Comm_free(sub, ierr); call cnt(13)
  if (rank == 0) print '(a,es20.12,a,es20.12)', 'fring checksum ', s, ' ', tot
  if (report) then
     call cnt(15)
     n = min(size, 64)
     call MPI_Gather(counts, nk, MPI_INTEGER, allc, nk, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
     if (rank == 0) then
        do k = 1, n
           call print_counts(k - 1, allc(:, k))
        end do
     end if
  end if
  call MPI_Finalize(ierr)
contains
  subroutine cnt(i)
    integer, intent(in) :: i
    counts(i) = counts(i) + 1
  end subroutine cnt
  subroutine print_counts(r, c)
    integer, intent(in) :: r, c(nk)
    character(len=1024) :: line
    integer :: j
    write (line, '(a,i0)') 'calls rank=', r
    do j = 1, nk
       if (c(j) > 0) write (line, '(a,a,a,a,i0)') trim(line), ' ', trim(names(j)), '=', c(j)
    end do
    write (line, '(a,a)') trim(line), ' MPI_Finalize=1'
    print '(a)', trim(line)
  end subroutine print_counts
end program fring
