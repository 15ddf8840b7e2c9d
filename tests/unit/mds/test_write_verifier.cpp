// SPDX-License-Identifier: LGPL-3.0-or-later
//
// mds/write_verifier: the verifier NFSv4 clients get for writes the MDS forwards UNSTABLE.
#include "mds/write_verifier.hpp"

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
extern "C" {
#include <cmocka.h>
}
// clang-format on

using flexfiles::mds::ExportWriteVerifier;

namespace {

const ExportWriteVerifier::Bytes kBase{1, 2, 3, 4, 5, 6, 7, 8};
const flexfiles::fleet::WriteVerifier kBoot1{9, 9, 9, 9, 0, 0, 0, 1};
const flexfiles::fleet::WriteVerifier kBoot2{9, 9, 9, 9, 0, 0, 0, 2};

// The first verifier of each data server, and the same one again, move nothing.
void test_the_same_verifier_keeps_the_clients(void**) {
    ExportWriteVerifier v(kBase);
    assert_true(v.current() == kBase);
    assert_false(v.observe(1, kBoot1));
    assert_false(v.observe(2, kBoot2)); // another data server's own verifier
    assert_false(v.observe(1, kBoot1));
    assert_int_equal(v.generation(), 0);
    assert_true(v.current() == kBase);
}

// A data server that restarted (another verifier) may have lost unstable data: the
// export's verifier moves, so that clients send their uncommitted writes again; and it
// stays moved.
void test_a_restarted_data_server_moves_the_verifier(void**) {
    ExportWriteVerifier v(kBase);
    v.observe(1, kBoot1);
    assert_true(v.observe(1, kBoot2));
    assert_int_equal(v.generation(), 1);
    const auto moved = v.current();
    assert_false(moved == kBase);
    assert_false(v.observe(1, kBoot2));
    assert_true(v.current() == moved);
    assert_true(v.observe(1, kBoot1)); // back again: another change
    assert_false(v.current() == moved);
}

// Two export instances (an MDS restart) get different random bases.
void test_each_instance_has_its_own_base(void**) {
    ExportWriteVerifier a, b;
    assert_false(a.current() == b.current());
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_same_verifier_keeps_the_clients),
        cmocka_unit_test(test_a_restarted_data_server_moves_the_verifier),
        cmocka_unit_test(test_each_instance_has_its_own_base),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
