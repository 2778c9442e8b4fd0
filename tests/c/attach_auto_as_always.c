// ENV: LIBOMPTARGET_TREAT_ATTACH_AUTO_AS_ALWAYS=1
// With LIBOMPTARGET_TREAT_ATTACH_AUTO_AS_ALWAYS=1 every ATTACH entry attaches (see attach_auto.h).
#include "attach_auto.h"
