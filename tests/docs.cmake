# docs.cmake — the pages a user reads, checked; included by
# tests/CMakeLists.txt (label unit):
#   api_docs          Doxygen over include/hetrt/*.h (docs/Doxyfile) warns
#                     about nothing and documents every public function
#   policy_doc        docs/policy.md names every key the policy parser
#                     reads, and each of its YAML examples is a valid policy
#   docs_snippets     every C block of getting-started.md and
#                     provider-guide.md is the file, or a run of lines of
#                     the file, its marker names
#   getting_started   the page's commands and its C program, run against
#                     the installed hetrt (fixture hetrt_install)
#   provider_example  examples/provider built out of tree against the
#                     installed hetrt and its driver run (hetrt_install)
#   partview_html     partview's HTML report in headless Chromium: no
#                     JavaScript error, tables, sorting, filter
if(HETRT_PYTHON_EXE)
  set(HETRT_DOCS_TEST_PY ${HETRT_PYTHON_EXE})
else()
  set(HETRT_DOCS_TEST_PY /usr/bin/python3)
endif()
set(HETRT_DOCS_PREFIX ${CMAKE_BINARY_DIR}/install-test)

find_package(Doxygen 1.9 QUIET)
if(DOXYGEN_FOUND)
  file(GLOB HETRT_DOCS_HEADERS ${CMAKE_SOURCE_DIR}/include/hetrt/*.h)
  list(SORT HETRT_DOCS_HEADERS)
  add_test(NAME api_docs
    COMMAND ${HETRT_DOCS_TEST_PY} ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_api_docs.py
            ${DOXYGEN_EXECUTABLE} ${CMAKE_BINARY_DIR}/docs/Doxyfile ${HETRT_DOCS_HEADERS})
  set_tests_properties(api_docs PROPERTIES LABELS unit TIMEOUT 120)
else()
  message(STATUS "Doxygen not found: test api_docs not registered")
endif()

if(TARGET hetrt_cli)
  add_test(NAME policy_doc
    COMMAND ${HETRT_DOCS_TEST_PY} ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_policy_doc.py
            --root ${CMAKE_SOURCE_DIR} --hetrt $<TARGET_FILE:hetrt_cli>)
  set_tests_properties(policy_doc PROPERTIES LABELS unit TIMEOUT 60)
endif()

add_test(NAME docs_snippets
  COMMAND ${HETRT_DOCS_TEST_PY} ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_snippets.py
          --root ${CMAKE_SOURCE_DIR}
          ${CMAKE_SOURCE_DIR}/docs/getting-started.md ${CMAKE_SOURCE_DIR}/docs/provider-guide.md)
set_tests_properties(docs_snippets PROPERTIES LABELS unit TIMEOUT 60)

add_test(NAME getting_started
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/docs/test_getting_started.sh ${HETRT_DOCS_PREFIX})
set_tests_properties(getting_started PROPERTIES LABELS unit TIMEOUT 300
  SKIP_RETURN_CODE 77 FIXTURES_REQUIRED hetrt_install
  ENVIRONMENT "HETRT_PYTHON=${HETRT_DOCS_TEST_PY};HETRT_DOCS_PYTHON=$<IF:$<TARGET_EXISTS:hetrt_python>,required,optional>")

add_test(NAME provider_example
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/docs/test_provider_example.sh ${HETRT_DOCS_PREFIX})
set_tests_properties(provider_example PROPERTIES LABELS unit TIMEOUT 300
  FIXTURES_REQUIRED hetrt_install ENVIRONMENT "HETRT_PREFIX=${HETRT_DOCS_PREFIX}")

if(TARGET partview)
  add_test(NAME partview_html
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/docs/test_partview_html.sh $<TARGET_FILE:partview>)
  set_tests_properties(partview_html PROPERTIES LABELS unit TIMEOUT 300
    SKIP_RETURN_CODE 77 ENVIRONMENT "HETRT_PYTHON=${HETRT_DOCS_TEST_PY}")
endif()
