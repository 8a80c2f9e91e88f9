# partview.cmake — CTest tests of the `partview` tool, included by
# tests/CMakeLists.txt:
#   partview         tests/partview/test_partview.sh on the small CNN that
#                    tests/partview/make_model.py writes (all formats, cpu and
#                    emu,cpu, escaping, -o, error exits)         (label unit)
#   partview_models  the same format checks on the whole-model fixtures of
#                    tests/models/gen_models.py (ResNet-style CNN, transformer)
#                                                                 (label models)
# The DOT syntax check runs `dot -Tsvg` when graphviz is installed.
if(NOT TARGET partview)
  return()
endif()
if(NOT HETRT_PYTHON_EXE)
  set(HETRT_PYTHON_EXE /usr/bin/python3)
endif()

add_test(NAME partview
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/partview/test_partview.sh $<TARGET_FILE:partview>)
set_tests_properties(partview PROPERTIES LABELS unit TIMEOUT 300 SKIP_RETURN_CODE 77
  ENVIRONMENT "HETRT_PYTHON=${HETRT_PYTHON_EXE}")

if(TEST models_generate)
  add_test(NAME partview_models
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/partview/test_partview.sh
            $<TARGET_FILE:partview> ${CMAKE_CURRENT_BINARY_DIR}/models)
  set_tests_properties(partview_models PROPERTIES LABELS models TIMEOUT 600
    SKIP_RETURN_CODE 77 FIXTURES_REQUIRED hetrt_models
    ENVIRONMENT "HETRT_PYTHON=${HETRT_PYTHON_EXE}")
endif()
