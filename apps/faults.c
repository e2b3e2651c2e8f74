/* faults: a run that ends badly, to check that traces survive it. Every rank loops over a
 * ring exchange and an allreduce; after --after iterations the chosen rank(s) end the run:
 *   abort    MPI_Abort(MPI_COMM_WORLD, 3)
 *   sigterm  the process sends itself SIGTERM (as a batch system or mpirun would)
 *   exit     exit(0) without MPI_Finalize
 *   hang     keep looping (with a sleep) until killed from outside
 *   segv     write a line to stderr and raise SIGSEGV (a crashing program)
 *   status   every rank calls MPI_Finalize; the chosen rank(s) then exit with status 7 */
#include "common.h"

#include <signal.h>
#include <unistd.h>

static const char *usage =
    "usage: faults --mode abort|sigterm|exit|hang|segv|status [--after N] [--rank R] [--report-calls]\n"
    "  --after   iterations before the fault (default 5)\n"
    "  --rank    rank that faults, -1 = every rank (default 1; exit defaults to -1)\n";

int main(int argc, char **argv)
{
    app_args(argc, argv, usage);
    const char *mode = arg_str("--mode", "");
    int after = (int)arg_int("--after", 5);
    int who = (int)arg_int("--rank", strcmp(mode, "exit") ? 1 : -1);
    C(MPI_Init)(&argc, &argv);
    int rank, size;
    C(MPI_Comm_rank)(MPI_COMM_WORLD, &rank);
    C(MPI_Comm_size)(MPI_COMM_WORLD, &size);
    if (strcmp(mode, "abort") && strcmp(mode, "sigterm") && strcmp(mode, "exit") &&
        strcmp(mode, "hang") && strcmp(mode, "segv") && strcmp(mode, "status")) {
        if (rank == 0)
            fprintf(stderr, "faults: --mode abort|sigterm|exit|hang|segv|status\n");
        C(MPI_Abort)(MPI_COMM_WORLD, 2);
    }
    int me = who < 0 || who == rank % size;
    double x = rank, y = 0;
    for (int it = 0;; it++) {
        if (it == after && me) {
            printf("rank %d: %s after %d iterations\n", rank, mode, it);
            fflush(stdout);
            if (!strcmp(mode, "abort"))
                C(MPI_Abort)(MPI_COMM_WORLD, 3);
            else if (!strcmp(mode, "sigterm"))
                kill(getpid(), SIGTERM);
            else if (!strcmp(mode, "exit"))
                exit(0);
            else if (!strcmp(mode, "segv")) {
                fprintf(stderr, "rank %d: about to crash\n", rank);
                fflush(stderr);
                raise(SIGSEGV);
            }
        }
        if (it == after && !strcmp(mode, "status")) {
            C(MPI_Finalize)();
            return me ? 7 : 0;
        }
        C(MPI_Sendrecv)(&x, 1, MPI_DOUBLE, (rank + 1) % size, 0, &y, 1, MPI_DOUBLE,
                        (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        C(MPI_Allreduce)(&y, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (!strcmp(mode, "hang") && it >= after)
            usleep(20000);
    }
}
