# One static library per layer of the core (see cmake/layers.txt for the table).
#
# A layer's sources see the headers of their own layer and of the layers below it that the table
# lists, and no others: each library gets a private include folder in the build tree holding
# links to just those include/pypto/<layer> folders. An include that runs upward therefore fails
# to compile ("pypto/driver/run.h: No such file or directory") instead of slipping through.
# Consumers (tools, tests, bindings, benchmarks) link the `pypto` interface target, which adds
# every layer and the whole include/ folder.

function(pypto_read_layers out_layers)
  file(STRINGS ${PROJECT_SOURCE_DIR}/cmake/layers.txt lines REGEX "^[a-z]+:")
  set(layers "")
  foreach(line ${lines})
    string(REGEX REPLACE "^([a-z]+):.*$" "\\1" layer "${line}")
    string(REGEX REPLACE "^[a-z]+:[ ]*" "" deps "${line}")
    separate_arguments(deps UNIX_COMMAND "${deps}")
    list(APPEND layers ${layer})
    set(PYPTO_LAYER_DEPS_${layer} ${deps} PARENT_SCOPE)
  endforeach()
  set(${out_layers} ${layers} PARENT_SCOPE)
endfunction()

function(pypto_add_layer layer)
  set(deps ${PYPTO_LAYER_DEPS_${layer}})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${layer}/*.cpp)
  add_library(pypto_${layer} STATIC ${sources} ${ARGN})
  add_library(pypto::${layer} ALIAS pypto_${layer})

  set(view ${PROJECT_BINARY_DIR}/layer_headers/${layer})
  file(REMOVE_RECURSE ${view})
  file(MAKE_DIRECTORY ${view}/pypto)
  foreach(visible ${layer} ${deps})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/pypto/${visible} ${view}/pypto/${visible}
         SYMBOLIC)
  endforeach()
  target_include_directories(pypto_${layer} PRIVATE ${view})
  # What a consumer of pypto::<layer> sees: in the build tree (add_subdirectory) the same view,
  # so a layer linking another still sees only the layers below it; once installed, include/.
  target_include_directories(pypto_${layer} INTERFACE $<BUILD_INTERFACE:${view}>
                                                      $<INSTALL_INTERFACE:include>)
  set_target_properties(pypto_${layer} PROPERTIES EXPORT_NAME ${layer})
  foreach(dep ${deps})
    target_link_libraries(pypto_${layer} PUBLIC pypto_${dep})
  endforeach()
endfunction()
