// SPDX-License-Identifier: LGPL-3.0-or-later
// CMocka from C++: its C prerequisites first, C linkage, and its fail() macro removed (it
// breaks std::basic_ios::fail() in standard headers included afterwards).
#pragma once
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include <cmocka.h>
}
#undef fail
