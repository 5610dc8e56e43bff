/* Shared by both box files. Old code defined globals in headers like this. */
int debug_level;

void *fibo(void *hnd, int n);
void *gcdbox(void *hnd, int f, int g);
