/* test_emu_staging.c — the provider ABI's staging slots (version 2) on the
 * emu and the double-buffered staged copies of src/transfer/copy.c:
 * byte-exact both ways for sizes around the chunk size (0, 1, chunk-1,
 * chunk, chunk+1, 3*chunk+5) without touching bytes past the copy, tensor
 * copies through het_transfer_copy_chunked, submit returning before a
 * paced copy ends, errors found at submit, an injected fault in the middle
 * chunk, and a version-1 vtable read as having no staging slots.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/status.h"
#include "core/tensor.h"
#include "providers/emu/emu.h"
#include "providers/emu/emu_internal.h"
#include "transfer/copy.h"
#include "common/emu_helpers.h"

#define CHUNK 4096
#define GUARD 64

static void fill(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (unsigned char)(seed >> 16);
  }
}

/* Host -> emu staged, read back synchronously; emu filled synchronously,
 * staged back to the host; both byte-exact, guard bytes untouched. */
static void round_trip(void *st, size_t n, size_t chunk) {
  het_device dev = {&het_emu_provider, st, 0};
  unsigned char *src = malloc(n + GUARD), *dst = malloc(n + GUARD);
  ck_assert(src && dst);
  void *h;
  ck_assert_int_eq(het_emu_provider.alloc(st, n ? n : 1, &h), HET_OK);
  fill(src, n, 7u + (unsigned)n);
  ck_assert_int_eq(het_transfer_staged(&dev, HET_COPY_TO_DEVICE, h, src, n,
                                       chunk), HET_OK);
  memset(dst, 0xA5, n + GUARD);
  ck_assert_int_eq(het_emu_provider.copy_to_host(st, dst, h, n), HET_OK);
  ck_assert_msg(memcmp(src, dst, n) == 0, "to device, %zu bytes", n);
  fill(src, n, 99u + (unsigned)n);
  ck_assert_int_eq(het_emu_provider.copy_from_host(st, h, src, n), HET_OK);
  memset(dst, 0x5A, n + GUARD);
  ck_assert_int_eq(het_transfer_staged(&dev, HET_COPY_TO_HOST, h, dst, n,
                                       chunk), HET_OK);
  ck_assert_msg(memcmp(src, dst, n) == 0, "to host, %zu bytes", n);
  for (size_t i = n; i < n + GUARD; i++)
    ck_assert_msg(dst[i] == 0x5A, "byte %zu past a %zu-byte copy written", i,
                  n);
  het_emu_provider.free(st, h);
  free(src);
  free(dst);
}

static const size_t sizes[] = {0, 1, CHUNK - 1, CHUNK, CHUNK + 1,
                               2 * CHUNK, 3 * CHUNK + 5};

START_TEST(test_staged_sizes_exact) {
  void *st;
  ck_assert_int_eq(emu_create(NULL, NULL, &st), HET_OK);
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    round_trip(st, sizes[i], CHUNK);
  round_trip(st, 3 * CHUNK + 5, 1); /* one-byte chunks */
  het_emu_provider.destroy(st);
}
END_TEST

/* Tensors host -> emu -> host through the copy step's entry point with a
 * small chunk (staged above it, synchronous slots at or below it). */
START_TEST(test_tensor_copy_chunked) {
  void *st;
  ck_assert_int_eq(emu_create(NULL, NULL, &st), HET_OK);
  het_device dev = {&het_emu_provider, st, 0};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    int64_t dims[1] = {(int64_t)sizes[i]};
    het_tensor x = {0}, on = {0}, back = {0};
    ck_assert_int_eq(het_tensor_alloc(&x, HET_DTYPE_UINT8, dims, 1), HET_OK);
    fill(x.data, sizes[i], 3u);
    ck_assert_int_eq(het_transfer_copy_chunked(&x, &dev, &on, CHUNK), HET_OK);
    ck_assert_ptr_eq(on.device, &dev);
    ck_assert_int_eq(het_transfer_copy_chunked(&on, NULL, &back, CHUNK),
                     HET_OK);
    ck_assert_uint_eq(back.nbytes, sizes[i]);
    ck_assert_msg(sizes[i] == 0 || memcmp(x.data, back.data, sizes[i]) == 0,
                  "%zu bytes", sizes[i]);
    het_tensor_reset(&x);
    het_tensor_reset(&on);
    het_tensor_reset(&back);
  }
  het_emu_provider.destroy(st);
}
END_TEST

/* Timed mode, 1 MB at 0.02 GB/s (~50 ms): submit returns at once, wait
 * takes the paced time; the staging block is reused after free_host. */
START_TEST(test_submit_is_asynchronous) {
  char path[64];
  write_profile("provider: emu\nlink_bandwidth: 0.02GB/s\nlink_latency: 0\n",
                path, sizeof path);
  static const char *const timed[] = {"mode=timed", NULL};
  void *st, *h, *buf, *ticket;
  ck_assert_int_eq(emu_create(path, timed, &st), HET_OK);
  size_t n = 1000000;
  ck_assert_int_eq(het_emu_provider.alloc(st, n, &h), HET_OK);
  ck_assert_int_eq(het_emu_provider.alloc_host(st, n, &buf), HET_OK);
  memset(buf, 1, n);
  double t0 = now_s();
  ck_assert_int_eq(het_emu_provider.copy_submit(st, HET_COPY_TO_DEVICE, h, 0,
                                                buf, n, &ticket), HET_OK);
  double submitted = now_s() - t0;
  ck_assert_int_eq(het_emu_provider.copy_wait(st, ticket), HET_OK);
  double done = now_s() - t0;
  ck_assert_msg(submitted < 10e-3, "submit took %.2f ms", submitted * 1e3);
  ck_assert_msg(done >= 49e-3, "paced copy done in %.2f ms", done * 1e3);
  het_emu_provider.free_host(st, buf);
  void *again;
  ck_assert_int_eq(het_emu_provider.alloc_host(st, n / 2, &again), HET_OK);
  ck_assert_ptr_eq(again, buf); /* pooled */
  het_emu_provider.free_host(st, again);
  het_emu_provider.free(st, h);
  het_emu_provider.destroy(st);
  unlink(path);
}
END_TEST

START_TEST(test_submit_errors) {
  void *st, *h, *buf, *ticket = NULL;
  ck_assert_int_eq(emu_create(NULL, NULL, &st), HET_OK);
  ck_assert_int_eq(het_emu_provider.alloc(st, 100, &h), HET_OK);
  ck_assert_int_eq(het_emu_provider.alloc_host(st, 100, &buf), HET_OK);
  ck_assert_int_eq(het_emu_provider.copy_submit(st, HET_COPY_TO_HOST, h, 60,
                                                buf, 41, &ticket),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "access of 101 bytes"));
  ck_assert_int_eq(het_emu_provider.copy_submit(st, HET_COPY_TO_HOST, buf, 0,
                                                buf, 1, &ticket),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_emu_provider.copy_submit(st, HET_COPY_TO_HOST, h,
                                                SIZE_MAX, buf, 2, &ticket),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_null(ticket);
  ck_assert_int_eq(het_emu_provider.copy_submit(st, HET_COPY_TO_HOST, h, 60,
                                                buf, 40, &ticket), HET_OK);
  ck_assert_int_eq(het_emu_provider.copy_wait(st, ticket), HET_OK);
  het_emu_provider.free_host(st, buf);
  het_emu_provider.free(st, h);
  het_emu_provider.destroy(st);
}
END_TEST

/* The second of four chunks fails: the copy reports it, every ticket is
 * waited for (no hang, no leak under ASan), and the next copy works. */
START_TEST(test_staged_fault_mid_copy) {
  static const char *const opts[] = {"fail_copy=2", NULL};
  void *st, *h;
  ck_assert_int_eq(emu_create(NULL, opts, &st), HET_OK);
  het_device dev = {&het_emu_provider, st, 0};
  size_t n = 3 * CHUNK + 5;
  unsigned char *src = malloc(n), *dst = malloc(n);
  fill(src, n, 5u);
  ck_assert_int_eq(het_emu_provider.alloc(st, n, &h), HET_OK);
  ck_assert_int_eq(het_transfer_staged(&dev, HET_COPY_TO_DEVICE, h, src, n,
                                       CHUNK), HET_ERR_IO);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "injected fault: copy #2"));
  ck_assert_int_eq(het_transfer_staged(&dev, HET_COPY_TO_DEVICE, h, src, n,
                                       CHUNK), HET_OK);
  ck_assert_int_eq(het_transfer_staged(&dev, HET_COPY_TO_HOST, h, dst, n,
                                       CHUNK), HET_OK);
  ck_assert_int_eq(memcmp(src, dst, n), 0);
  het_emu_provider.free(st, h);
  het_emu_provider.destroy(st);
  free(src);
  free(dst);
}
END_TEST

/* A provider built against ABI 1 has no staging slots as far as the core
 * can tell, whatever lies past its table; ABI 2 without the slots neither. */
START_TEST(test_abi1_has_no_staging) {
  het_provider_vtable v1 = het_emu_provider;
  v1.abi_version = 1;
  het_device d1 = {&v1, NULL, 0}, d2 = {&het_emu_provider, NULL, 0};
  ck_assert(!het_transfer_has_staging(&d1));
  ck_assert(het_transfer_has_staging(&d2));
  het_provider_vtable v2 = het_emu_provider;
  v2.copy_wait = NULL;
  het_device d3 = {&v2, NULL, 0};
  ck_assert(!het_transfer_has_staging(&d3));
  ck_assert(!het_transfer_has_staging(NULL));
  ck_assert_int_eq(het_transfer_staged(&d1, HET_COPY_TO_DEVICE, NULL, NULL, 0,
                                       CHUNK), HET_ERR_INVALID_ARGUMENT);
}
END_TEST

static Suite *staging_suite(void) {
  Suite *s = suite_create("emu_staging");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_staged_sizes_exact);
  tcase_add_test(core, test_tensor_copy_chunked);
  tcase_add_test(core, test_submit_is_asynchronous);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_submit_errors);
  tcase_add_test(errors, test_staged_fault_mid_copy);
  tcase_add_test(errors, test_abi1_has_no_staging);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(staging_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
