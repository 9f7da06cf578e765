# Install rules for C++ consumers (included by the top-level CMakeLists.txt, component
# "development"): include/pypto, the device headers the runtime's headers include, one static
# library per layer, and lib/cmake/pypto/ with the exported targets pypto::<layer> and
# pypto::pypto. The Python wheel installs only the component "python" (pyproject.toml).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PYPTO_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/pypto)
set(PYPTO_INSTALLED_TARGETS pypto)
foreach(layer ${PYPTO_LAYERS})
  list(APPEND PYPTO_INSTALLED_TARGETS pypto_${layer})
endforeach()

install(TARGETS ${PYPTO_INSTALLED_TARGETS} EXPORT pyptoTargets COMPONENT development
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/pypto DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT development)
install(FILES ${PYPTO_DEVICE_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pypto/device
        COMPONENT development)
install(EXPORT pyptoTargets NAMESPACE pypto:: DESTINATION ${PYPTO_INSTALL_CMAKEDIR}
        COMPONENT development)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/pyptoConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/pyptoConfig.cmake
                              INSTALL_DESTINATION ${PYPTO_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pyptoConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pyptoConfig.cmake ${PROJECT_BINARY_DIR}/pyptoConfigVersion.cmake
        DESTINATION ${PYPTO_INSTALL_CMAKEDIR} COMPONENT development)

if(PYPTO_BUILD_TOOLS AND NOT SKBUILD)
  install(TARGETS pypto_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT development)
endif()
