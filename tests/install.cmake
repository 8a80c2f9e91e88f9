# install.cmake — the installed library, included by tests/CMakeLists.txt:
#   install_prefix    cmake --install into BUILD/install-test and checks what
#                     lands there (fixture hetrt_install for tests that build
#                     against the installed hetrt)                 (label unit)
#   install_consumer  examples/consumer built out of tree against that prefix
#                     with find_package (shared and static) and pkg-config,
#                     and run                                      (label unit)
set(HETRT_INSTALL_TEST_PREFIX ${CMAKE_BINARY_DIR}/install-test)
add_test(NAME install_prefix
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install/test_install.sh prefix
          ${CMAKE_BINARY_DIR} ${HETRT_INSTALL_TEST_PREFIX})
set_tests_properties(install_prefix PROPERTIES LABELS unit TIMEOUT 300
  FIXTURES_SETUP hetrt_install)
add_test(NAME install_consumer
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install/test_install.sh consumer
          ${CMAKE_SOURCE_DIR} ${HETRT_INSTALL_TEST_PREFIX})
set_tests_properties(install_consumer PROPERTIES LABELS unit TIMEOUT 300
  SKIP_RETURN_CODE 77 FIXTURES_REQUIRED hetrt_install)
