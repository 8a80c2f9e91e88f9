/* pack_avx512.h — 64 int32 values into 64 bytes with AVX-512BW, for the
 * 8-bit outputs of the VNNI convolution (qconv_vnni.c) and of
 * QuantizeLinear and QLinearAdd (quant_vec.c).  Two pack rounds and a
 * permute, one 64-byte store: vpmovdb's stores took half the time of a
 * ResNet-50 residual add here (802816 bytes: 73 -> 53 us, hot).
 */
#ifndef HET_KERNELS_PACK_AVX512_H
#define HET_KERNELS_PACK_AVX512_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <stdbool.h>

/* q0..q3 (values 0-15, 16-31, 32-47, 48-63) as 64 bytes in order:
 * sat8(sat16(sat16(q) + zp)), zp given as 32 int16 lanes, sat8 to uint8
 * or, is_signed, int8. */
__attribute__((target("avx512f,avx512bw"))) static inline __m512i
het_pack64(__m512i q0, __m512i q1, __m512i q2, __m512i q3, __m512i zp16,
           bool is_signed) {
  __m512i p0 = _mm512_adds_epi16(_mm512_packs_epi32(q0, q1), zp16);
  __m512i p1 = _mm512_adds_epi16(_mm512_packs_epi32(q2, q3), zp16);
  __m512i b = is_signed ? _mm512_packs_epi16(p0, p1)
                        : _mm512_packus_epi16(p0, p1);
  /* lane L holds dwords L of q0..q3 in turn: gather each one's four */
  const __m512i order =
      _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_permutexvar_epi32(order, b);
}

/* het_pack64's bytes stored at y. */
__attribute__((target("avx512f,avx512bw"))) static inline void
het_pack64_store(__m512i q0, __m512i q1, __m512i q2, __m512i q3,
                 __m512i zp16, bool is_signed, void *y) {
  _mm512_storeu_si512(y, het_pack64(q0, q1, q2, q3, zp16, is_signed));
}
#endif

#endif
