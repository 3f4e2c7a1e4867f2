# Helpers shared by every subsystem's CMakeLists.txt.
#
#   imago_library(NAME SOURCES a.cpp b.cpp DEPS other_lib ...)
#   imago_tests(NAME SOURCES a_test.cpp DEPS lib ...)   -> gtest binary, tests discovered by CTest
#   imago_benchmark(NAME SOURCES a_benchmark.cpp DEPS lib ...)

# One precompiled header built once and reused by every library and test.
add_library(imago_pch STATIC ${CMAKE_SOURCE_DIR}/cmake/pch_stub.cpp)
target_include_directories(imago_pch PUBLIC ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(imago_pch PUBLIC Boost::json)
target_precompile_headers(imago_pch PRIVATE ${CMAKE_SOURCE_DIR}/cmake/pch.h)

function(imago_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} Boost::json Threads::Threads)
  target_precompile_headers(${name} REUSE_FROM imago_pch)
endfunction()

#   imago_tests(NAME POSTGRES ...) -> its tests need the throwaway PostgreSQL (CTest fixture
#                                     "postgres", src/store/CMakeLists.txt)
function(imago_tests name)
  if(NOT IMAGO_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "POSTGRES" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_precompile_headers(${name} REUSE_FROM imago_pch)
  if(ARG_POSTGRES)
    target_link_libraries(${name} PRIVATE imago_test_postgres)
    gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
                         PROPERTIES TIMEOUT 300 LABELS ${name} FIXTURES_REQUIRED postgres)
  else()
    gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
                         PROPERTIES TIMEOUT 300 LABELS ${name})
  endif()
endfunction()

function(imago_benchmark name)
  if(NOT IMAGO_BUILD_BENCH)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark benchmark::benchmark_main)
endfunction()
