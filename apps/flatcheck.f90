! flatcheck: the latency injector's semantics from a Fortran program (mpif.h bindings; fring
! uses `use mpi`, fring08 `use mpi_f08`). Run it under `latitude inject --delta-L D` with
! --delta-us D. Every message carries its send time (CLOCK_MONOTONIC, one clock per node) and
! its identity; the receiver checks the data and that it became visible >= ΔL after the send:
! Irecv/Isend/Waitall (two small Isends to one peer: MPI may give both one handle), Send/Recv
! with wildcards, Sendrecv, persistent requests with Startall, a Test loop, Iprobe, Waitany,
! Testsome, and Allreduce (latency and result), Bcast, Alltoall. Ranks 0 and 1 exchange; all
! ranks take part in the collectives. Prints "flatcheck: ok <n> checks" or one
! "flatcheck: FAIL ..." line per failure (exit status 1).
program flatcheck
  use iso_c_binding
  implicit none
  include 'mpif.h'
  interface
     integer(c_int) function clock_gettime(id, ts) bind(C, name='clock_gettime')
       import :: c_int, c_long
       integer(c_int), value :: id
       integer(c_long) :: ts(2)
     end function clock_gettime
  end interface
  integer :: ierr, rank, size, peer, k, it, fails, checks, tot(2), both(2), idx, n
  integer :: reqs(4), sts(MPI_STATUS_SIZE, 4), st(MPI_STATUS_SIZE), got(4)
  double precision :: delta_us, m(4, 4), o(4, 4), x, sum, t, dt, longest
  double precision, allocatable :: a(:), b(:)
  logical :: flag
  character(len=32) :: arg

  delta_us = 0
  do k = 1, command_argument_count() - 1
     call get_command_argument(k, arg)
     if (arg == '--delta-us') then
        call get_command_argument(k + 1, arg)
        read (arg, *) delta_us
     end if
  end do
  fails = 0
  checks = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  peer = 1 - rank
  do it = 1, 3
     if (rank <= 1) then
        ! the ring of HPCC's b_eff: two receives, two small sends, one Waitall
        call MPI_Irecv(m(:, 1), 4, MPI_DOUBLE_PRECISION, peer, 20, MPI_COMM_WORLD, reqs(1), ierr)
        call MPI_Irecv(m(:, 2), 4, MPI_DOUBLE_PRECISION, peer, 21, MPI_COMM_WORLD, reqs(2), ierr)
        do k = 1, 2
           o(:, k) = [now_us(), dble(rank), dble(19 + k), dble(it)]
           call MPI_Isend(o(:, k), 4, MPI_DOUBLE_PRECISION, peer, 19 + k, MPI_COMM_WORLD, &
                reqs(2 + k), ierr)
        end do
        call MPI_Waitall(4, reqs, sts, ierr)
        t = now_us()
        call check_msg(m(:, 1), sts(:, 1), it, t, 'Isend/Irecv/Waitall')
        call check_msg(m(:, 2), sts(:, 2), it, t, 'Isend/Irecv/Waitall')
        call expect(all(reqs == MPI_REQUEST_NULL), 'Waitall frees the requests', 0d0, 0d0)
        ! wildcard receives, in sending order
        if (rank == 0) then
           do k = 1, 3
              o(:, 1) = [now_us(), 0d0, 5d0, dble(k)]
              call MPI_Send(o(:, 1), 4, MPI_DOUBLE_PRECISION, 1, 5, MPI_COMM_WORLD, ierr)
           end do
        else
           do k = 1, 3
              call MPI_Recv(m(:, 1), 4, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, MPI_ANY_TAG, &
                   MPI_COMM_WORLD, st, ierr)
              call check_msg(m(:, 1), st, k, now_us(), 'Recv(ANY_SOURCE, ANY_TAG)')
           end do
        end if
        ! Sendrecv
        o(:, 1) = [now_us(), dble(rank), 6d0, dble(it)]
        call MPI_Sendrecv(o(:, 1), 4, MPI_DOUBLE_PRECISION, peer, 6, m(:, 1), 4, &
             MPI_DOUBLE_PRECISION, peer, 6, MPI_COMM_WORLD, st, ierr)
        call check_msg(m(:, 1), st, it, now_us(), 'Sendrecv')
        ! persistent requests, started together
        call MPI_Recv_init(m(:, 3), 4, MPI_DOUBLE_PRECISION, peer, 7, MPI_COMM_WORLD, reqs(1), ierr)
        call MPI_Send_init(o(:, 3), 4, MPI_DOUBLE_PRECISION, peer, 7, MPI_COMM_WORLD, reqs(2), ierr)
        do k = 1, 2
           o(:, 3) = [now_us(), dble(rank), 7d0, dble(k)]
           call MPI_Startall(2, reqs, ierr)
           call MPI_Waitall(2, reqs, sts, ierr)
           call check_msg(m(:, 3), sts(:, 1), k, now_us(), 'persistent Startall/Waitall')
        end do
        call MPI_Request_free(reqs(1), ierr)
        call MPI_Request_free(reqs(2), ierr)
        ! a Test loop, Iprobe, Waitany and Testsome (rank 0 sends, rank 1 receives)
        if (rank == 0) then
           do k = 8, 12
              o(:, 1) = [now_us(), 0d0, dble(k), dble(it)]
              call MPI_Send(o(:, 1), 4, MPI_DOUBLE_PRECISION, 1, k, MPI_COMM_WORLD, ierr)
           end do
        else
           call MPI_Irecv(m(:, 1), 4, MPI_DOUBLE_PRECISION, 0, 8, MPI_COMM_WORLD, reqs(1), ierr)
           flag = .false.
           do while (.not. flag)
              call MPI_Test(reqs(1), flag, st, ierr)
           end do
           call check_msg(m(:, 1), st, it, now_us(), 'Test loop')
           flag = .false.
           do while (.not. flag)
              call MPI_Iprobe(0, 9, MPI_COMM_WORLD, flag, st, ierr)
           end do
           t = now_us()
           call MPI_Recv(m(:, 1), 4, MPI_DOUBLE_PRECISION, 0, 9, MPI_COMM_WORLD, st, ierr)
           call check_msg(m(:, 1), st, it, t, 'Iprobe')
           call MPI_Irecv(m(:, 2), 4, MPI_DOUBLE_PRECISION, 0, 10, MPI_COMM_WORLD, reqs(1), ierr)
           call MPI_Waitany(1, reqs, idx, st, ierr)
           call check_msg(m(:, 2), st, it, now_us(), 'Waitany')
           call expect(idx == 1, 'Waitany index is 1-based', dble(idx), 1d0)
           call MPI_Irecv(m(:, 3), 4, MPI_DOUBLE_PRECISION, 0, 11, MPI_COMM_WORLD, reqs(1), ierr)
           call MPI_Irecv(m(:, 4), 4, MPI_DOUBLE_PRECISION, 0, 12, MPI_COMM_WORLD, reqs(2), ierr)
           got = 0
           do while (sum_int(got) < 2)
              call MPI_Testsome(2, reqs, n, got(3:4), sts, ierr)
              do k = 1, n
                 call check_msg(m(:, 2 + got(2 + k)), sts(:, k), it, now_us(), 'Testsome')
                 got(got(2 + k)) = 1
              end do
           end do
        end if
     end if
     ! collectives: the rank that arrives first waits >= ΔL for the other's message
     t = now_us()
     x = rank + 1
     call MPI_Allreduce(x, sum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
     dt = now_us() - t
     call expect(sum == size * (size + 1) / 2d0, 'Allreduce result', sum, size * (size + 1) / 2d0)
     call MPI_Allreduce(dt, longest, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
     call expect(longest >= delta_us - 0.05d0, 'Allreduce latency', longest, delta_us)
     x = merge(42d0 + it, 0d0, rank == 0)
     call MPI_Bcast(x, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
     call expect(x == 42d0 + it, 'Bcast result', x, 42d0 + it)
     allocate (a(size), b(size))
     a = [(100d0 * rank + k, k = 0, size - 1)]
     call MPI_Alltoall(a, 1, MPI_DOUBLE_PRECISION, b, 1, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
     call expect(all(b == [(100d0 * k + rank, k = 0, size - 1)]), 'Alltoall result', b(1), dble(rank))
     deallocate (a, b)
  end do
  both = [fails, checks]
  call MPI_Reduce(both, tot, 2, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. tot(1) == 0) print '(a,i0,a)', 'flatcheck: ok ', tot(2), ' checks'
  call MPI_Finalize(ierr)
  if (rank == 0 .and. tot(1) /= 0) stop 1
contains
  double precision function now_us()
    integer(c_long) :: ts(2)
    integer(c_int) :: rc
    rc = clock_gettime(1_c_int, ts) ! CLOCK_MONOTONIC
    now_us = dble(ts(1)) * 1d6 + dble(ts(2)) / 1d3
  end function now_us

  integer function sum_int(v)
    integer, intent(in) :: v(:)
    sum_int = v(1) + v(2)
  end function sum_int

  subroutine expect(ok, what, got, want)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    double precision, intent(in) :: got, want
    checks = checks + 1
    if (.not. ok) then
       fails = fails + 1
       print '(a,i0,a,a,a,f0.3,a,f0.3,a)', 'flatcheck: FAIL rank ', rank, ': ', what, ' (got ', &
            got, ', expected ', want, ')'
    end if
  end subroutine expect

  ! the payload is the one sent by the status's source with its tag and number `seq`, and it
  ! became visible at `seen` >= ΔL after its send
  subroutine check_msg(msg, s, seq, seen, what)
    double precision, intent(in) :: msg(4), seen
    integer, intent(in) :: s(MPI_STATUS_SIZE), seq
    character(len=*), intent(in) :: what
    call expect(nint(msg(2)) == s(MPI_SOURCE) .and. nint(msg(3)) == s(MPI_TAG), what, msg(2), &
         dble(s(MPI_SOURCE)))
    call expect(nint(msg(4)) == seq, what, msg(4), dble(seq))
    call expect(seen - msg(1) >= delta_us - 0.05d0, what, seen - msg(1), delta_us)
  end subroutine check_msg
end program flatcheck
