# The resources of the HTML profile pages (`pypto profile html`, `pypto profile diff --html`),
# embedded in the profiling library so that each page is written as one self-contained file that
# needs no network: the page shell, the page scripts and the d3 visualisation library.
#
# d3 comes from Debian's node-d3 package (d3 5.16, one browser bundle of 258 KB): its zoom,
# brush, scale and axis modules are what an interactive timeline needs, the pages draw plain SVG
# with it, and it is a fraction of the size of the charting libraries on PyPI (plotly.js alone is
# over 3 MB). Debian's libjs-d3 is d3 3.5, whose API the current d3 replaced; the pages use the
# d3-zoom/d3-selection API of d3 5 and later. -DPYPTO_D3_JS=/path/to/d3.min.js picks another copy
# (d3 5 or newer).
#
# Sets PYPTO_HTML_REPORT_SOURCES: the generated .cpp files to compile into the profiling library.

set(PYPTO_D3_JS_DEFAULT /usr/share/nodejs/d3/dist/d3.min.js)
set(PYPTO_D3_JS ${PYPTO_D3_JS_DEFAULT} CACHE FILEPATH
    "d3.min.js (d3 5 or newer) embedded in the HTML profile report")
if(NOT EXISTS ${PYPTO_D3_JS})
  message(FATAL_ERROR
          "The HTML profile report embeds the d3 library, and ${PYPTO_D3_JS} does not exist. "
          "Install Debian's package node-d3 (apt-get install node-d3; it is listed in "
          "scripts/deps-apt.txt), or point -DPYPTO_D3_JS at a d3.min.js of d3 5 or newer.")
endif()
# The bundle's first line is "// https://d3js.org v5.16.0 Copyright ...": refuse d3 3 and 4
# (libjs-d3), whose zoom and selection API differ, here rather than as a blank page later.
file(STRINGS ${PYPTO_D3_JS} d3_banner LIMIT_COUNT 1 LENGTH_MAXIMUM 200)
if(NOT d3_banner MATCHES "d3js.org v([0-9]+)\\." OR CMAKE_MATCH_1 LESS 5)
  string(SUBSTRING "${d3_banner}" 0 60 d3_start)
  message(FATAL_ERROR
          "${PYPTO_D3_JS} is not d3 5 or newer (it starts with '${d3_start}'). Install Debian's "
          "package node-d3, or point -DPYPTO_D3_JS at another d3.min.js.")
endif()

set(PYPTO_HTML_REPORT_SOURCES "")
# pypto_embed_html_resource(<file> <symbol> [SCRIPT]): <file> as `const char <symbol>[]`.
# SCRIPT: the text goes inside a <script> element, so it must not contain "</script" or "<!--".
function(pypto_embed_html_resource input symbol)
  get_filename_component(name ${input} NAME)
  set(output ${CMAKE_CURRENT_BINARY_DIR}/generated/html/${name}.cpp)
  set(script_flag "")
  if(ARGN STREQUAL "SCRIPT")
    set(script_flag -DSCRIPT=ON)
  endif()
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DOUTPUT=${output} -DSYMBOL=${symbol}
            -DNAMESPACE=pypto::profiling ${script_flag}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/EmbedText.cmake
    DEPENDS ${input} ${CMAKE_CURRENT_SOURCE_DIR}/cmake/EmbedText.cmake
    COMMENT "Embedding ${name} in the HTML profile report")
  set(PYPTO_HTML_REPORT_SOURCES ${PYPTO_HTML_REPORT_SOURCES} ${output} PARENT_SCOPE)
endfunction()

set(html_dir ${CMAKE_CURRENT_SOURCE_DIR}/src/profiling/html)
pypto_embed_html_resource(${html_dir}/page.html kHtmlPage)
pypto_embed_html_resource(${html_dir}/page.css kHtmlStyle)
pypto_embed_html_resource(${PYPTO_D3_JS} kHtmlD3 SCRIPT)
pypto_embed_html_resource(${html_dir}/common.js kHtmlCommonJs SCRIPT)
pypto_embed_html_resource(${html_dir}/timeline.js kHtmlTimelineJs SCRIPT)
pypto_embed_html_resource(${html_dir}/tree.js kHtmlTreeJs SCRIPT)
pypto_embed_html_resource(${html_dir}/report.js kHtmlReportJs SCRIPT)
pypto_embed_html_resource(${html_dir}/diff.js kHtmlDiffJs SCRIPT)
