# run.cmake — one fuzz_run_<target> CTest test (tests/fuzz.cmake): copies
# the committed seeds to WORK/corpus, fuzzes for SECONDS with artifacts in
# WORK/crashes, fails with libFuzzer's report and every reproducer when it
# finds a crash, leak, timeout or OOM.
# Variables: FUZZER TARGET SEEDS WORK DICT SECONDS SEED (libFuzzer's -seed:
# 0 picks one at random).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/crashes)
file(GLOB seeds ${SEEDS}/*)
if(seeds)
  file(COPY ${seeds} DESTINATION ${WORK}/corpus)
endif()
# The fuzzer's progress lines go to WORK/fuzz.log; a failure prints the
# report at the log's end (the sanitizer's or libFuzzer's, with its stack)
# in the test's message, where a truncated CI log still shows it.
execute_process(COMMAND ${FUZZER} -max_total_time=${SECONDS} -seed=${SEED}
    -rss_limit_mb=2048 -timeout=10 -dict=${DICT} -print_final_stats=1
    -artifact_prefix=${WORK}/crashes/ ${WORK}/corpus
  RESULT_VARIABLE rc OUTPUT_FILE ${WORK}/fuzz.log ERROR_FILE ${WORK}/fuzz.log)
file(GLOB found ${WORK}/crashes/*)
if(NOT rc EQUAL 0 OR found)
  file(STRINGS ${WORK}/fuzz.log lines)
  set(report "")
  set(keep FALSE)
  foreach(line IN LISTS lines)
    if(line MATCHES "^==[0-9]+==|ERROR:|deadly signal|Timeout|timeout after|out-of-memory|runtime error")
      set(keep TRUE)
    endif()
    if(keep AND NOT line MATCHES "^#[0-9]+\t")
      string(APPEND report "  ${line}\n")
    endif()
  endforeach()
  string(REPLACE ";" "\n  " found "${found}")
  message(FATAL_ERROR "${TARGET}: libFuzzer exited with ${rc}; its report "
    "(whole log: ${WORK}/fuzz.log):\n${report}reproducers:\n  ${found}\n"
    "replay one with: ${FUZZER} FILE; keep it under tests/fuzz/regressions/${TARGET}/ once fixed")
endif()
file(STRINGS ${WORK}/fuzz.log stats REGEX "^stat::")
string(REPLACE ";" "\n" stats "${stats}")
message(STATUS "${TARGET}: clean\n${stats}")
