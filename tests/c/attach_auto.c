// Attach semantics with LIBOMPTARGET_TREAT_ATTACH_AUTO_AS_ALWAYS unset (see attach_auto.h).
#include "attach_auto.h"
