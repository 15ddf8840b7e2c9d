// SPDX-License-Identifier: LGPL-3.0-or-later
// layout/authority: the credentials a layout hands out per iomode, the order of the RW
// checks, and the registry of opens with write access per client and file.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" { // cmocka.h (1.1) declares its functions without C linkage
#include <cmocka.h>
}
#undef fail

#include "layout/authority.hpp"

#include <thread>
#include <vector>

using namespace flexfiles::layout;

namespace {

flexfiles::mds::DataFile data_file(std::uint32_t uid, std::uint32_t gid) {
    flexfiles::mds::DataFile f;
    f.fencing_uid = uid;
    f.fencing_gid = gid;
    return f;
}

void test_credentials_per_iomode(void**) {
    const auto f = data_file(1000042, 1000077);
    // RW: the data file's owner and group.
    assert_true(
        (layout_credentials(f, Iomode::ReadWrite, 2000000) == DsCredentials{1000042, 1000077}));
    // READ: another uid, the same group (mode 0640: the group reads, only the owner writes).
    assert_true((layout_credentials(f, Iomode::Read, 2000000) == DsCredentials{2000000, 1000077}));
    // After a fencing (new owner and group), READ layouts follow the new group.
    const auto fenced = data_file(1000043, 1000078);
    assert_int_equal(layout_credentials(fenced, Iomode::Read, 2000000).gid, 1000078);
    assert_int_equal(layout_credentials(fenced, Iomode::Read, 2000000).uid, 2000000);
}

void test_data_file_mode(void**) {
    // Owner read/write, group read only, others nothing.
    assert_int_equal(flexfiles::mds::kDataFileMode & 0700, 0600);
    assert_int_equal(flexfiles::mds::kDataFileMode & 0070, 0040);
    assert_int_equal(flexfiles::mds::kDataFileMode & 0007, 0);
}

void test_refusal_order(void**) {
    int permission_checks = 0;
    auto allowed = [&] {
        permission_checks++;
        return true;
    };
    auto denied = [&] {
        permission_checks++;
        return false;
    };
    assert_true(rw_refusal(true, true, allowed) == RwRefusal::none);
    assert_int_equal(permission_checks, 1);
    assert_true(rw_refusal(true, true, denied) == RwRefusal::no_permission);
    assert_int_equal(permission_checks, 2);
    // The cheap checks first; the permission check does not run when they fail.
    assert_true(rw_refusal(false, true, allowed) == RwRefusal::export_read_only);
    assert_true(rw_refusal(false, false, denied) == RwRefusal::export_read_only);
    assert_true(rw_refusal(true, false, allowed) == RwRefusal::no_write_open);
    assert_int_equal(permission_checks, 2);
}

void test_open_registry(void**) {
    OpenRegistry reg;
    int a_open = 0, a_second = 0, b_open = 0, deleg = 0; // addresses stand for states
    reg.set(&a_open, 1, 0xa, false);
    assert_false(reg.client_may_write(1, 0xa));
    // An open upgrade (reopen2) of the same state.
    reg.set(&a_open, 1, 0xa, true);
    assert_true(reg.client_may_write(1, 0xa));
    assert_int_equal(reg.size(), 1);
    // Another client's read-only open gives it nothing; a's write open is not b's.
    reg.set(&b_open, 1, 0xb, false);
    assert_false(reg.client_may_write(1, 0xb));
    // Another file.
    assert_false(reg.client_may_write(2, 0xa));
    // A second open of a for reading only does not take the first one's access away.
    reg.set(&a_second, 1, 0xa, false);
    assert_true(reg.client_may_write(1, 0xa));
    // A downgrade does.
    reg.set(&a_open, 1, 0xa, false);
    assert_false(reg.client_may_write(1, 0xa));
    // A write delegation counts like a write open; returning it ends that.
    reg.set(&deleg, 1, 0xb, true);
    assert_true(reg.client_may_write(1, 0xb));
    reg.forget(&deleg);
    assert_false(reg.client_may_write(1, 0xb));
    // Closing and freeing; forgetting twice is harmless.
    reg.set(&a_open, 1, 0xa, true);
    reg.forget(&a_open);
    reg.forget(&a_open);
    assert_false(reg.client_may_write(1, 0xa));
    assert_int_equal(reg.size(), 2);
    // An address reused for a state of another file moves to that file.
    reg.set(&b_open, 3, 0xb, true);
    assert_false(reg.client_may_write(1, 0xb));
    assert_true(reg.client_may_write(3, 0xb));
    reg.forget(&b_open);
    reg.forget(&a_second);
    assert_int_equal(reg.size(), 0);
    assert_false(reg.client_may_write(3, 0xb));
}

void test_open_registry_threads(void**) {
    OpenRegistry reg;
    std::vector<int> states(4 * 1000);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 1000; i++) {
                const void* key = &states[t * 1000 + i];
                reg.set(key, i % 7, t, true);
                (void)reg.client_may_write(i % 7, t);
                if (i % 2 == 0)
                    reg.forget(key);
            }
        });
    for (auto& th : threads)
        th.join();
    assert_int_equal(reg.size(), 4 * 500);
    for (int t = 0; t < 4; t++)
        assert_true(reg.client_may_write(1, t));
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_credentials_per_iomode), cmocka_unit_test(test_data_file_mode),
        cmocka_unit_test(test_refusal_order),          cmocka_unit_test(test_open_registry),
        cmocka_unit_test(test_open_registry_threads),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
