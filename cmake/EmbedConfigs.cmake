# Generates a C++ source holding every JSON file under configs/ as a string, keyed by its path
# relative to configs/ (e.g. "models/llama3-8b.json"). Re-runs when a config changes.
file(GLOB_RECURSE TESSEL_CONFIG_FILES CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/configs/models/*.json
     ${CMAKE_SOURCE_DIR}/configs/clusters/*.json
     ${CMAKE_SOURCE_DIR}/configs/plans/*.json
     ${CMAKE_SOURCE_DIR}/configs/validation/*.json)
set(TESSEL_EMBEDDED_CONFIGS_CPP ${CMAKE_BINARY_DIR}/generated/embedded_configs.cpp)
# Called from core/CMakeLists.txt: a custom command's output is only visible in its own directory.
macro(tessel_embed_configs)
add_custom_command(
  OUTPUT ${TESSEL_EMBEDDED_CONFIGS_CPP}
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR}/configs -DOUTPUT=${TESSEL_EMBEDDED_CONFIGS_CPP}
          -P ${CMAKE_SOURCE_DIR}/cmake/WriteEmbeddedConfigs.cmake
  DEPENDS ${TESSEL_CONFIG_FILES} ${CMAKE_SOURCE_DIR}/cmake/WriteEmbeddedConfigs.cmake
  COMMENT "Embedding configs/ presets")
endmacro()
