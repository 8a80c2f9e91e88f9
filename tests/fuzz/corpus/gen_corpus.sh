#!/usr/bin/env bash
# gen_corpus.sh — (re)makes the committed seed corpora of tests/fuzz from
# Debian's ONNX backend test data (libonnx-testdata), the repository's
# test models and configs/devices: fuzz_model/ (small model.onnx files of
# varied ops, control flow, quantized ops, sequences, and the loader's and
# hostile tests' fixtures), fuzz_tensor/ (input_*.pb / output_*.pb of
# backend cases of every dtype), fuzz_profile/ (the device profiles),
# fuzz_policy/ (the placement policies: configs/policies and the policy
# tests' files, the malformed ones included), fuzz_plan/ (small plan
# files that `hetrt compile` writes: $HETRT, default build/hetrt, must
# exist).
# Each file is named after where it came from.  Run from anywhere.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
node=/usr/share/libonnx-testdata/data/node
hetrt=${HETRT:-$root/build/hetrt}
rm -rf "$here/fuzz_model" "$here/fuzz_tensor" "$here/fuzz_profile" "$here/fuzz_policy" "$here/fuzz_plan"
mkdir -p "$here/fuzz_model" "$here/fuzz_tensor" "$here/fuzz_profile" "$here/fuzz_policy" "$here/fuzz_plan"

models="add relu conv_with_strides_padding maxpool_2d_pads
  averagepool_2d_default gemm_default_matrix_bias matmul_2d
  reshape_reordered_all_dims transpose_default concat_2d_axis_0 slice
  gather_0 softmax_axis_1 batchnorm_epsilon cast_FLOAT_to_FLOAT16
  constantofshape_int_zeros expand_dim_changed tile
  range_float_type_positive_delta if loop11 scan9_sum where_example
  reduce_sum_keepdims_example squeeze unsqueeze_axis_0
  split_equal_parts_1d resize_upsample_scales_nearest
  layer_normalization_2d_axis0 lstm_defaults gru_defaults
  einsum_batch_matmul argmax_default_axis_example nonzero_example
  onehot_with_axis dequantizelinear quantizelinear qlinearconv
  convtranspose instancenorm_example clip flatten_axis0 shape size
  dropout_default cumsum_1d depthtospace_dcr_mode gathernd_example_int32
  scatternd mod_mixed_sign_int32 equal not_2d sequence_insert_at_back
  castlike_FLOAT_to_DOUBLE matmulinteger erf sum_example hardmax_example"
for m in $models; do
  cp "$node/test_$m/model.onnx" "$here/fuzz_model/node_$m.onnx"
done
for f in "$root"/tests/data/loader/*.onnx "$root"/tests/data/hostile/*.onnx; do
  d=$(basename "$(dirname "$f")")
  cp "$f" "$here/fuzz_model/${d}_$(basename "$f")"
done
for c in if_conv loop_conv nested_if scan_rnn; do
  cp "$root/tests/data/control/$c/model.onnx" "$here/fuzz_model/control_$c.onnx"
done
cp "$root/tests/data/emu/transformer_small.onnx" "$here/fuzz_model/emu_transformer_small.onnx"
# Reshape targets computed from Shape (dynamic axes: core/infer_sym.c)
cp "$root/tests/data/emu/transformer_dyn.onnx" "$here/fuzz_model/emu_transformer_dyn.onnx"
# float16 regions the optimizer computes in float32 (opt_f16.c)
cp "$root/tests/data/optimizer/f16_region/model.onnx" "$here/fuzz_model/optimizer_f16_region.onnx"

tensors="add cast_FLOAT_to_FLOAT16 cast_FLOAT_to_DOUBLE
  castlike_FLOAT_to_BFLOAT16 equal not_2d mod_mixed_sign_int32
  mod_mixed_sign_int64 mod_mixed_sign_int8 mod_mixed_sign_uint16
  mod_uint32 mod_uint64 mod_int64_fmod gathernd_example_int32
  constantofshape_int_zeros quantizelinear dequantizelinear
  cast_FLOAT_to_STRING nonzero_example shape size"
for t in $tensors; do
  for f in "$node/test_$t"/test_data_set_0/*.pb; do
    [ -f "$f" ] || continue
    cp "$f" "$here/fuzz_tensor/${t}_$(basename "$f")"
  done
done
cp "$root"/configs/devices/*.yaml "$here/fuzz_profile/"
cp "$root"/configs/policies/*.yaml "$root"/tests/data/policy/*.yaml "$here/fuzz_policy/"
for f in "$root"/tests/data/policy/bad/*.yaml; do
  cp "$f" "$here/fuzz_policy/bad_$(basename "$f")"
done
# Plans made on the CPU alone, so they load wherever the fuzzer runs.
"$hetrt" compile "$root/tests/data/emu/resnet_small.onnx" -o "$here/fuzz_plan/resnet_small.hplan" >/dev/null
"$hetrt" compile "$root/tests/data/control/if_conv/model.onnx" -o "$here/fuzz_plan/if_conv.hplan" >/dev/null
"$hetrt" compile "$root/tests/data/emu/transformer_small.onnx" -o "$here/fuzz_plan/transformer_small.hplan" >/dev/null
# Two shape regimes (emu with its default profile, so no profile path).
"$hetrt" compile "$root/tests/data/emu/regime_convs.onnx" -o "$here/fuzz_plan/regime_convs.hplan" \
  --providers emu,cpu --shape x=1x3x16x16 --regime x=1x3x128x128 >/dev/null
