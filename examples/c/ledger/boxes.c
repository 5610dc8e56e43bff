#include <C4SNet.h>

/* box open((<n>) -> (acc, <#w>)): a new account for worker n, starting at n * 1000 */
void *open(void *hnd, int n)
{
    long start = 1000L * n;
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_long, 1, &start), n);
    return hnd;
}

/* box add((acc, v, <#w>) -> (acc, <#w>) | (sum, <k>)): add v to the account (kept in
 * place: the account object belongs to this worker alone), and report the new total
 * as a copy. */
void *add(void *hnd, c4snet_data_t *acc, c4snet_data_t *v, int w)
{
    long *a = C4SNetGetData(acc);
    *a += *(int *)C4SNetGetData(v);
    C4SNetFree(v);
    c4snet_data_t *sum = C4SNetDeepCopy(acc);
    C4SNetOut(hnd, 1, acc, w);
    C4SNetOut(hnd, 2, sum, w);
    return hnd;
}

/* box mark(() -> (stamp)) */
void *mark(void *hnd)
{
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_char, 2, "ok"));
    return hnd;
}
