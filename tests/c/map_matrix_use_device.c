// STDERR
// The mapping-rules matrix (map_matrix.h) for use_device_ptr and use_device_addr on `target
// data` (map_matrix_use_device.h), where the translated address is found in a mapping: on data
// mapped as a larger section, as a sub-section or created by the construct, against every
// prior state of buf and every section.
#include "map_matrix_use_device.h"

MM_BUF_MAIN(use_device_cases, mm_buf_sections, NULL, mm_returns_found)
