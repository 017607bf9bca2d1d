/* unknownimport: imports a function no host provides (env.system). Loading
 * it must fail, naming the import. */
#define TOOL_NAME "unknownimport"
#include "hostile.h"

__attribute__((import_module("env"), import_name("system"))) int host_system(const char *);

EXPORT("call") int call(void) { return host_system("rm -rf /"); }
