# ctest InstallConsumer: installs this build into a temporary prefix (component "development"),
# configures and builds tests/install/consumer against it with find_package(pypto), runs the
# program and checks that it timed its stage.
#   cmake -DBUILD_DIR=<this build> -DWORK_DIR=<scratch> -DGENERATOR=<gen> [-DSANITIZE=<list>]
#         -P check_consumer.cmake
cmake_minimum_required(VERSION 3.21)
set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${WORK_DIR})

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

run_step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
         --component development)
# The package's files (lib/ may be lib64/ or lib/<multiarch>/, as GNUInstallDirs chose).
foreach(installed include/pypto/profiling/profiler.h include/pypto/device/pto_abi.h
                  cmake/pypto/pyptoConfig.cmake cmake/pypto/pyptoTargets.cmake)
  file(GLOB found ${prefix}/${installed} ${prefix}/*/${installed} ${prefix}/*/*/${installed})
  if(NOT found)
    message(FATAL_ERROR "cmake --install did not install ${installed}")
  endif()
endforeach()

# Libraries of a sanitizer build need the sanitizer runtime in the program that links them.
set(sanitizer_flags "")
if(SANITIZE)
  set(sanitizer_flags "-DCMAKE_CXX_FLAGS=-fsanitize=${SANITIZE}"
                      "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE}")
endif()
run_step("configuring the consumer" ${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR}/consumer
         -B ${consumer_build} -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix}
         -DCMAKE_BUILD_TYPE=Release ${sanitizer_flags})
run_step("building the consumer" ${CMAKE_COMMAND} --build ${consumer_build})
run_step("running the consumer" ${consumer_build}/time_a_stage)
if(NOT step_output MATCHES "sum 549755289600\n")
  message(FATAL_ERROR "the consumer computed the wrong sum:\n${step_output}")
endif()
string(REGEX REPLACE "^sum [0-9]+\n" "" profile "${step_output}")
string(JSON stage_name GET "${profile}" stages 0 name)
string(JSON stage_seconds GET "${profile}" stages 0 seconds)
if(NOT stage_name STREQUAL "consumer_sum" OR NOT stage_seconds GREATER 0)
  message(FATAL_ERROR "the consumer's profile lacks its timed stage:\n${profile}")
endif()
message(STATUS "consumer timed ${stage_name}: ${stage_seconds} s")
file(REMOVE_RECURSE ${WORK_DIR})
