# Writes OUTPUT, a C++ file defining `extern const char <SYMBOL>[]` in NAMESPACE with the text of
# INPUT, so that a resource (the HTML report's page, scripts and d3) ships inside the library.
# Usage: cmake -DINPUT=... -DOUTPUT=... -DSYMBOL=... -DNAMESPACE=... [-DSCRIPT=ON] -P EmbedText.cmake
# SCRIPT: the text is placed inside an HTML <script> element, where "</script" would end the
# element and "<!--" could make the parser swallow the rest of the page; such text is refused.
file(READ ${INPUT} text)
string(FIND "${text}" ")PYPTO_RESOURCE\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )PYPTO_RESOURCE\"")
endif()
if(SCRIPT)
  string(TOLOWER "${text}" lower)
  foreach(sequence "</script" "<!--")
    string(FIND "${lower}" "${sequence}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${INPUT} contains \"${sequence}\", which would break the <script> "
                          "element of the HTML report it is embedded in")
    endif()
  endforeach()
endif()
file(WRITE ${OUTPUT}.tmp
     "// Generated from ${INPUT} by cmake/EmbedText.cmake; do not edit.\n"
     "namespace ${NAMESPACE} {\n"
     "extern const char ${SYMBOL}[];\n"
     "const char ${SYMBOL}[] = R\"PYPTO_RESOURCE(${text})PYPTO_RESOURCE\";\n"
     "}  // namespace ${NAMESPACE}\n")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
