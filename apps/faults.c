/* faults: a run that ends badly, to check that traces survive it. Every rank loops over a
 * ring exchange and an allreduce; after --after iterations the chosen rank(s) end the run:
 *   abort    MPI_Abort(MPI_COMM_WORLD, 3)
 *   sigterm  the process sends itself SIGTERM (as a batch system or mpirun would)
 *   exit     exit(0) without MPI_Finalize
 *   hang     keep looping (with a sleep) until killed from outside */
#include "common.h"

#include <signal.h>
#include <unistd.h>

static const char *usage =
    "usage: faults --mode abort|sigterm|exit|hang [--after N] [--rank R] [--report-calls]\n"
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
        strcmp(mode, "hang")) {
        if (rank == 0)
            fprintf(stderr, "faults: --mode abort|sigterm|exit|hang\n");
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
        }
        C(MPI_Sendrecv)(&x, 1, MPI_DOUBLE, (rank + 1) % size, 0, &y, 1, MPI_DOUBLE,
                        (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        C(MPI_Allreduce)(&y, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (!strcmp(mode, "hang") && it >= after)
            usleep(20000);
    }
}
