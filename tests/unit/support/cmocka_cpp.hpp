// SPDX-License-Identifier: LGPL-3.0-or-later
// CMocka from C++: its C prerequisites first, C linkage, and its fail() macro removed because it
// breaks std::basic_ios::fail() in any standard header included afterwards (these tests use
// the assert_* macros only).
#pragma once
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" { // cmocka.h (1.1) declares its functions without C linkage for C++
#include <cmocka.h>
}
#undef fail
