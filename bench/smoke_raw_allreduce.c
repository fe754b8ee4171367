/* The incumbent: a plain MPI_Allreduce loop, timed the way nccl-tests (and cclforge
 * smoke) time it: warmup, then `iters` back-to-back calls, time per call averaged
 * over the ranks. Usage: smoke_raw_allreduce BYTES ITERS WARMUP. Prints time_us.
 * Built with -DRAW_DLOPEN (Open MPI only) it links no libmpi: it loads libmpi.so.40
 * with dlopen and calls through dlsym's pointers, as smoke must to choose an MPI
 * ABI at run time, so that a bench can tell that cost from smoke's own. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef RAW_DLOPEN
#include <dlfcn.h>
static int (*p_init)(int *, char ***);
static int (*p_rank)(MPI_Comm, int *);
static int (*p_size)(MPI_Comm, int *);
static int (*p_allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
static double (*p_wtime)(void);
static int (*p_finalize)(void);
static MPI_Comm world;
static MPI_Datatype type_float, type_double;
static MPI_Op op_sum;
#undef MPI_COMM_WORLD
#undef MPI_FLOAT
#undef MPI_DOUBLE
#undef MPI_SUM
#define MPI_Init p_init
#define MPI_Comm_rank p_rank
#define MPI_Comm_size p_size
#define MPI_Allreduce p_allreduce
#define MPI_Wtime p_wtime
#define MPI_Finalize p_finalize
#define MPI_COMM_WORLD world
#define MPI_FLOAT type_float
#define MPI_DOUBLE type_double
#define MPI_SUM op_sum

/* Open MPI's predefined handles are the addresses of these objects */
static int resolve(void)
{
    void *dl = dlopen("libmpi.so.40", RTLD_NOW | RTLD_GLOBAL);
    if (!dl) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return -1;
    }
    *(void **)&p_init = dlsym(dl, "MPI_Init");
    *(void **)&p_rank = dlsym(dl, "MPI_Comm_rank");
    *(void **)&p_size = dlsym(dl, "MPI_Comm_size");
    *(void **)&p_allreduce = dlsym(dl, "MPI_Allreduce");
    *(void **)&p_wtime = dlsym(dl, "MPI_Wtime");
    *(void **)&p_finalize = dlsym(dl, "MPI_Finalize");
    world = dlsym(dl, "ompi_mpi_comm_world");
    type_float = dlsym(dl, "ompi_mpi_float");
    type_double = dlsym(dl, "ompi_mpi_double");
    op_sum = dlsym(dl, "ompi_mpi_op_sum");
    if (!p_init || !p_rank || !p_size || !p_allreduce || !p_wtime || !p_finalize || !world || !type_float ||
        !type_double || !op_sum) {
        fprintf(stderr, "libmpi.so.40 lacks an Open MPI symbol\n");
        return -1;
    }
    return 0;
}
#else
static int resolve(void) { return 0; }
#endif

int main(int argc, char **argv)
{
    if (resolve() < 0)
        return 1;
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
