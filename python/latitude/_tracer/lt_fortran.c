/* Fortran support: the real entry points, the Fortran sentinels, completions and starts of
 * Fortran requests (see lt_fortran.h). The wrappers themselves are generated (lt_gen.py). */
#define _GNU_SOURCE
#include "lt_fortran.h"

#ifdef LT_FORTRAN
#include <dlfcn.h>
/* gcc cannot see that the small on-stack arrays are filled before use */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <stdio.h>
#include <stdlib.h>

typedef MPI_Fint F;

lt_ffn lt_fsym(const char *name)
{
    lt_ffn fn = (lt_ffn)dlsym(RTLD_NEXT, name);
    if (!fn) {
        fprintf(stderr, "latitude-trace: %s not found in the MPI Fortran library\n", name);
        abort();
    }
    return fn;
}

F *lt_fcomp_begin(struct lt_fcomp *f, F *reqs, int n, F *st, int many)
{
    f->on = lt_active();
    f->ust = f->fst = st;
    if (!f->on)
        return st;
    f->n = n;
    f->many = many;
    f->h = n <= LT_SMALL ? f->hsmall : malloc(sizeof(MPI_Request) * (size_t)n);
    f->slots = n <= LT_SMALL ? f->ssmall : malloc(sizeof(void *) * (size_t)n);
    for (int i = 0; i < n; i++) {
        f->h[i] = PMPI_Request_f2c(reqs[i]);
        f->slots[i] = &reqs[i];
    }
    lt_comp_init(&f->c, f->h, f->slots, n);
    if (lt_reqs_status_needed && (many ? fs_statuses_ignored(st) : fs_status_ignored(st)))
        f->fst = malloc(sizeof(F) * LT_F_STATUS * (size_t)(many && n ? n : 1));
    return f->fst;
}

void lt_fcomp_claim(struct lt_fcomp *f) { lt_comp_claim(&f->c); }

void lt_fcomp_free(struct lt_fcomp *f)
{
    lt_comp_free(&f->c, NULL);
    if (f->h != f->hsmall)
        free(f->h);
    if (f->slots != f->ssmall)
        free(f->slots);
    if (f->fst != f->ust)
        free(f->fst);
}

char *lt_fcomp_end(char *p, struct lt_fcomp *f, const F *idx, int ndone, int by_input)
{
    int small[LT_SMALL], *cidx = NULL;
    if (idx) { /* Fortran indices are 1-based */
        cidx = ndone <= LT_SMALL ? small : malloc(sizeof(int) * (size_t)(ndone ? ndone : 1));
        for (int k = 0; k < ndone; k++)
            cidx[k] = idx[k] - 1;
    }
    MPI_Status *cst = NULL;
    if (f->c.wild) {
        int ns = f->many ? f->n : 1;
        cst = malloc(sizeof(MPI_Status) * (size_t)ns);
        for (int i = 0; i < ns; i++)
            PMPI_Status_f2c(f->fst + (size_t)i * LT_F_STATUS, &cst[i]);
        f->c.st = cst;
    }
    p = lt_comp_end(p, &f->c, cidx, ndone, by_input);
    f->c.st = NULL;
    free(cst);
    if (cidx != small)
        free(cidx);
    return p;
}

uint64_t lt_sig_freqs(uint64_t h, const F *reqs, int n)
{
    for (int i = 0; i < n; i++)
        h = lt_mix(h, (uint64_t)(uint32_t)reqs[i]);
    return h;
}

char *lt_fext_start(char *p, F *reqs, int count)
{
    MPI_Request hsmall[LT_SMALL], *h = hsmall;
    const void *ssmall[LT_SMALL], **slots = ssmall;
    if (count > LT_SMALL) {
        h = malloc(sizeof(*h) * (size_t)count);
        slots = malloc(sizeof(void *) * (size_t)count);
    }
    for (int i = 0; i < count; i++) {
        h[i] = PMPI_Request_f2c(reqs[i]);
        slots[i] = &reqs[i];
    }
    p = lt_ext_start(p, h, slots, count);
    if (h != hsmall)
        free(h);
    if (slots != ssmall)
        free(slots);
    return p;
}
#endif
