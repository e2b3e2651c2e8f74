#include "lt_log.h"
