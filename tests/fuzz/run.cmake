# run.cmake — one fuzz_run_<target> CTest test (tests/fuzz.cmake): copies
# the committed seeds to WORK/corpus, fuzzes for SECONDS with artifacts in
# WORK/crashes, fails naming every reproducer when libFuzzer reports a
# crash, leak, timeout or OOM.
# Variables: FUZZER TARGET SEEDS WORK DICT SECONDS SEED (libFuzzer's -seed:
# 0 picks one at random).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/crashes)
file(GLOB seeds ${SEEDS}/*)
if(seeds)
  file(COPY ${seeds} DESTINATION ${WORK}/corpus)
endif()
execute_process(COMMAND ${FUZZER} -max_total_time=${SECONDS} -seed=${SEED}
    -rss_limit_mb=2048 -timeout=10 -dict=${DICT} -print_final_stats=1
    -artifact_prefix=${WORK}/crashes/ ${WORK}/corpus
  RESULT_VARIABLE rc)
file(GLOB found ${WORK}/crashes/*)
if(NOT rc EQUAL 0 OR found)
  string(REPLACE ";" "\n  " found "${found}")
  message(FATAL_ERROR "${TARGET}: libFuzzer exited with ${rc}; reproducers:\n  ${found}\n"
    "replay one with: ${FUZZER} FILE; keep it under tests/fuzz/regressions/${TARGET}/ once fixed")
endif()
