# libFuzzer targets (tests/fuzz/fuzz_*.c), built when HETRT_FUZZ=ON (clang,
# with HETRT_SANITIZE's ASan+UBSan).  The library's objects get coverage
# instrumentation (-fsanitize=fuzzer-no-link); only the targets link
# libFuzzer.  Two CTest tests per target, label fuzz:
#   fuzz_replay_<t>  every committed seed (tests/fuzz/corpus/<corpus>) and
#                    every past crash (tests/fuzz/regressions/<t>) once;
#   fuzz_run_<t>     HETRT_FUZZ_SECONDS of fuzzing on a copy of the corpus
#                    in the build tree (never the source tree); any crash,
#                    leak, timeout or OOM fails it and its file is printed.
set(HETRT_FUZZ_SECONDS 60 CACHE STRING "Seconds each fuzz_run_<target> test fuzzes")
# A fixed seed makes CI's short runs walk the same first mutations each
# time, so a finding shows up in the change that brings it, not at random
# in a later one; long runs by hand (scripts/fuzz.sh) pick their own.
set(HETRT_FUZZ_SEED 1 CACHE STRING "libFuzzer -seed of the fuzz_run tests (0: random)")
set(HETRT_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
set(HETRT_FUZZ_WORK ${CMAKE_BINARY_DIR}/fuzz)

foreach(layer ${HETRT_LAYERS})
  if(TARGET hetrt_obj_${layer})
    target_compile_options(hetrt_obj_${layer} PRIVATE
      $<$<COMPILE_LANGUAGE:C>:-fsanitize=fuzzer-no-link>)
  endif()
endforeach()

# fuzz_model_emu is fuzz_model with providers "emu,cpu": same source,
# same seeds.
set(HETRT_FUZZ_TARGETS fuzz_model fuzz_model_emu fuzz_tensor fuzz_profile fuzz_policy fuzz_plan)
set(HETRT_FUZZ_SOURCE_fuzz_model_emu fuzz_model)
set(HETRT_FUZZ_CORPUS_fuzz_model_emu fuzz_model)
set(HETRT_FUZZ_DICT_fuzz_model_emu onnx)
set(HETRT_FUZZ_DICT_fuzz_model onnx)
set(HETRT_FUZZ_DICT_fuzz_tensor onnx)
set(HETRT_FUZZ_DICT_fuzz_profile profile)
set(HETRT_FUZZ_DICT_fuzz_policy policy)
set(HETRT_FUZZ_DICT_fuzz_plan plan)

foreach(t ${HETRT_FUZZ_TARGETS})
  set(src ${t})
  if(HETRT_FUZZ_SOURCE_${t})
    set(src ${HETRT_FUZZ_SOURCE_${t}})
  endif()
  set(corpus ${t})
  if(HETRT_FUZZ_CORPUS_${t})
    set(corpus ${HETRT_FUZZ_CORPUS_${t}})
  endif()
  add_executable(${t} ${HETRT_FUZZ_DIR}/${src}.c)
  target_link_libraries(${t} PRIVATE hetrt_static)
  target_compile_options(${t} PRIVATE -fsanitize=fuzzer)
  target_link_options(${t} PRIVATE -fsanitize=fuzzer)
  target_compile_definitions(${t} PRIVATE HETRT_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  if(t STREQUAL "fuzz_model_emu")
    target_compile_definitions(${t} PRIVATE HETRT_FUZZ_EMU=1)
  endif()
  set_target_properties(${t} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${HETRT_FUZZ_WORK})

  set(replay_dirs ${HETRT_FUZZ_DIR}/corpus/${corpus})
  if(IS_DIRECTORY ${HETRT_FUZZ_DIR}/regressions/${t})
    list(APPEND replay_dirs ${HETRT_FUZZ_DIR}/regressions/${t})
  endif()
  set(env "HETRT_CACHE_DIR=${HETRT_FUZZ_WORK}/cache")
  file(MAKE_DIRECTORY ${HETRT_FUZZ_WORK}/replay/${t})
  add_test(NAME fuzz_replay_${t} COMMAND $<TARGET_FILE:${t}>
    -runs=0 -rss_limit_mb=2048 -timeout=10
    -artifact_prefix=${HETRT_FUZZ_WORK}/replay/${t}/ ${replay_dirs})
  add_test(NAME fuzz_run_${t} COMMAND ${CMAKE_COMMAND}
    -DFUZZER=$<TARGET_FILE:${t}> -DTARGET=${t}
    -DSEEDS=${HETRT_FUZZ_DIR}/corpus/${corpus}
    -DWORK=${HETRT_FUZZ_WORK}/ctest/${t}
    -DDICT=${HETRT_FUZZ_DIR}/dict/${HETRT_FUZZ_DICT_${t}}.dict
    -DSECONDS=${HETRT_FUZZ_SECONDS} -DSEED=${HETRT_FUZZ_SEED}
    -P ${HETRT_FUZZ_DIR}/run.cmake)
  math(EXPR run_timeout "${HETRT_FUZZ_SECONDS} + 300")
  set_tests_properties(fuzz_replay_${t} PROPERTIES LABELS fuzz TIMEOUT 600
    ENVIRONMENT "${env}")
  set_tests_properties(fuzz_run_${t} PROPERTIES LABELS fuzz TIMEOUT ${run_timeout}
    ENVIRONMENT "${env}")
endforeach()
