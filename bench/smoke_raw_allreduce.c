/* The incumbent: a plain MPI_Allreduce loop, timed the way nccl-tests (and cclforge
 * smoke) time it: warmup, then `iters` back-to-back calls, time per call averaged
 * over the ranks. Usage: smoke_raw_allreduce BYTES ITERS WARMUP. Prints time_us. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc != 4) {
        if (rank == 0)
            fprintf(stderr, "usage: %s BYTES ITERS WARMUP\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    size_t count = (size_t)atoll(argv[1]) / sizeof(float);
    int iters = atoi(argv[2]), warmup = atoi(argv[3]);
    float *send = malloc(count * sizeof *send), *recv = malloc(count * sizeof *recv);
    for (size_t i = 0; i < count; i++)
        send[i] = (float)(i % 7);
    for (int i = 0; i < warmup; i++)
        MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double us = (MPI_Wtime() - t0) * 1e6 / iters, sum = 0;
    MPI_Allreduce(&us, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%.4f\n", sum / n); /* 1 rank: tens of ns */
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
