# Writes OUTPUT, a C++ file defining `extern const char <SYMBOL>[]` in NAMESPACE with the text of
# INPUT, so that a resource (the HTML report template) ships inside the library.
# Usage: cmake -DINPUT=... -DOUTPUT=... -DSYMBOL=... -DNAMESPACE=... -P EmbedText.cmake
file(READ ${INPUT} text)
string(FIND "${text}" ")PYPTO_RESOURCE\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )PYPTO_RESOURCE\"")
endif()
file(WRITE ${OUTPUT}.tmp
     "// Generated from ${INPUT} by cmake/EmbedText.cmake; do not edit.\n"
     "namespace ${NAMESPACE} {\n"
     "extern const char ${SYMBOL}[];\n"
     "const char ${SYMBOL}[] = R\"PYPTO_RESOURCE(${text})PYPTO_RESOURCE\";\n"
     "}  // namespace ${NAMESPACE}\n")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
