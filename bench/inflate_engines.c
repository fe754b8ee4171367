/* Streaming inflate + CRC-32 of one raw deflate stream (a wheel member's
 * data, cut out by inflate_engines.sh), by zlib (what wheel verify uses now,
 * src/pkg/zip_read.c) and by ISA-L's igzip (a candidate: streaming like zlib,
 * so the memory bound holds; libdeflate is whole-buffer only). Both read the
 * input in 64 KiB pieces into an output buffer of OUT_KIB KiB (default 64,
 * verify's CF_WHEEL_CHUNK); each prints its CPU time per repeat, the bytes
 * out and the CRC, which must agree with each other and with the archive's.
 *   inflate_engines FILE.deflate [REPEATS] [OUT_KIB]   (REPEATS default 5) */
#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

enum { IN_PIECE = 64 * 1024, OUT_MAX = 4 << 20 };
static unsigned char out[OUT_MAX];
static size_t out_cap = 64 * 1024;

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static size_t piece(size_t off, size_t size) { return size - off < IN_PIECE ? size - off : IN_PIECE; }

static int by_zlib(const unsigned char *in, size_t size, size_t *total, unsigned long *crc)
{
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, -MAX_WBITS) != Z_OK)
        return -1;
    size_t off = 0;
    *crc = crc32(0L, Z_NULL, 0);
    *total = 0;
    for (int rc = Z_OK; rc != Z_STREAM_END;) {
        if (s.avail_in == 0 && off < size) {
            s.next_in = (unsigned char *)in + off;
            s.avail_in = (uInt)piece(off, size);
            off += s.avail_in;
        }
        s.next_out = out;
        s.avail_out = out_cap;
        rc = inflate(&s, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) {
            inflateEnd(&s);
            return -1;
        }
        *crc = crc32_z(*crc, out, out_cap - s.avail_out);
        *total += out_cap - s.avail_out;
    }
    inflateEnd(&s);
    return 0;
}

static int by_isal(const unsigned char *in, size_t size, size_t *total, unsigned long *crc)
{
    struct inflate_state s;
    isal_inflate_init(&s);
    s.crc_flag = ISAL_GZIP_NO_HDR; /* the gzip CRC-32 is the zip one; igzip computes it as it goes */
    size_t off = 0;
    *total = 0;
    while (s.block_state != ISAL_BLOCK_FINISH) {
        if (s.avail_in == 0 && off < size) {
            s.next_in = (unsigned char *)in + off;
            s.avail_in = (uint32_t)piece(off, size);
            off += s.avail_in;
        }
        s.next_out = out;
        s.avail_out = out_cap;
        if (isal_inflate(&s) != ISAL_DECOMP_OK)
            return -1;
        *total += out_cap - s.avail_out;
        if (s.avail_in == 0 && off == size && s.avail_out == out_cap)
            return -1; /* cut off */
    }
    *crc = s.crc;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: inflate_engines FILE.deflate [REPEATS]\n");
        return 2;
    }
    int repeats = argc > 2 ? atoi(argv[2]) : 5;
    if (argc > 3 && atoi(argv[3]) > 0 && (size_t)atoi(argv[3]) * 1024 <= OUT_MAX)
        out_cap = (size_t)atoi(argv[3]) * 1024;
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        perror(argv[1]);
        return 1;
    }
    const unsigned char *in = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (in == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    static const struct {
        const char *name;
        int (*run)(const unsigned char *, size_t, size_t *, unsigned long *);
    } engines[] = {{"zlib", by_zlib}, {"isal", by_isal}};
    printf("repeat engine cpu_s bytes_out crc32\n");
    for (int r = 0; r < repeats; r++)
        for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
            size_t total;
            unsigned long crc;
            double t = cpu_s();
            if (engines[i].run(in, (size_t)st.st_size, &total, &crc) != 0) {
                fprintf(stderr, "%s: %s failed on this stream\n", argv[1], engines[i].name);
                return 1;
            }
            printf("%d %s %.3f %zu %08lx\n", r, engines[i].name, cpu_s() - t, total, crc);
        }
    return 0;
}
