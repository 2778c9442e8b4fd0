// The library of exit_own_image_late.c: calls back into the program from its
// destructor and from an atexit handler, both of which run after the program's image is
// unregistered at exit.
#include <stdlib.h>

static void (*callback)(void);

void lib_set_callback(void (*f)(void)) { callback = f; }

static void at_exit_handler(void) {
  if (callback)
    callback();
}

__attribute__((constructor)) static void setup(void) { atexit(at_exit_handler); }
