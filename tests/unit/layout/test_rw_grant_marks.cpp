// SPDX-License-Identifier: LGPL-3.0-or-later
// layout/rw_grant_marks: a file is marked durably before its first RW layout goes out and
// once only while any is out; its mark is dropped lazily, with the next mark's
// transaction (a create's too) or a flush, and never while a layout of it is out again; a
// mark a create made with its map costs its RW layout no transaction; a store failure
// refuses the layout and changes nothing.
#include "cmocka_cpp.hpp"
#include "layout/rw_grant_marks.hpp"

#include <set>

using namespace flexfiles::layout;
using Key = RwGrantMarks::Key;

namespace {

// A stand-in store: the marks it holds and the transactions it saw.
struct FakeStore {
    std::set<Key> marks;
    int transactions = 0;
    bool fail = false;

    RwGrantMarks::Persist persist() {
        return [this](const std::vector<RwGrantMarks::Mark>& add, const std::vector<Key>& drop,
                      std::string& error) {
            if (fail) {
                error = "disk full";
                return false;
            }
            transactions++;
            for (const Key& k : drop)
                marks.erase(k);
            for (const auto& m : add)
                marks.insert(m.key);
            return true;
        };
    }
};

const Key kA{1, 2, 3};
const Key kB{4, 5};

void test_marked_once_before_the_first_rw_layout(void**) {
    FakeStore store;
    RwGrantMarks marks(store.persist());
    std::string error;
    assert_true(marks.granted(kA, 10, error));
    assert_int_equal(store.transactions, 1);
    assert_true(store.marks.count(kA) == 1);
    assert_true(marks.granted(kA, 10, error)); // a second client's RW layout of the file
    assert_int_equal(store.transactions, 1);
    assert_int_equal(marks.files_held(), 1);
}

void test_dropped_lazily_after_the_last_layout_ended(void**) {
    FakeStore store;
    RwGrantMarks marks(store.persist());
    std::string error;
    assert_true(marks.granted(kA, 10, error));
    assert_true(marks.granted(kA, 10, error));
    marks.ended(kA);
    assert_int_equal(marks.drops_pending(), 0); // one layout still out
    marks.ended(kA);
    assert_int_equal(marks.drops_pending(), 1);
    assert_true(store.marks.count(kA) == 1); // not yet: lazily
    // The next file's mark carries the drop in the same transaction.
    assert_true(marks.granted(kB, 11, error));
    assert_int_equal(store.transactions, 2);
    assert_true(store.marks.count(kA) == 0);
    assert_true(store.marks.count(kB) == 1);
    marks.ended(kB);
    assert_true(marks.flush(error));
    assert_true(store.marks.empty());
    assert_int_equal(store.transactions, 3);
    assert_true(marks.flush(error)); // nothing to drop: no transaction
    assert_int_equal(store.transactions, 3);
}

void test_a_new_layout_keeps_a_mark_waiting_to_be_dropped(void**) {
    FakeStore store;
    RwGrantMarks marks(store.persist());
    std::string error;
    assert_true(marks.granted(kA, 10, error));
    marks.ended(kA);
    assert_true(marks.granted(kA, 10, error)); // out again before the drop was written
    assert_int_equal(store.transactions, 1);   // the mark is still durable: nothing to write
    assert_int_equal(marks.drops_pending(), 0);
    assert_true(marks.flush(error));
    assert_true(store.marks.count(kA) == 1);
    assert_true(marks.granted(kB, 11, error));
    assert_true(store.marks.count(kA) == 1);
}

void test_a_store_failure_refuses_and_changes_nothing(void**) {
    FakeStore store;
    RwGrantMarks marks(store.persist());
    std::string error;
    assert_true(marks.granted(kA, 10, error));
    marks.ended(kA);
    store.fail = true;
    assert_false(marks.granted(kB, 11, error));
    assert_string_equal(error.c_str(), "disk full");
    assert_int_equal(marks.files_held(), 0);
    assert_int_equal(marks.drops_pending(), 1); // still to drop
    store.fail = false;
    assert_true(marks.granted(kB, 11, error));
    assert_true(store.marks.count(kA) == 0);
    assert_true(store.marks.count(kB) == 1);
}

void test_a_create_marks_with_its_map_and_carries_the_drops(void**) {
    FakeStore store;
    RwGrantMarks marks(store.persist());
    std::string error;
    assert_true(marks.granted(kA, 10, error));
    marks.ended(kA);
    assert_int_equal(store.transactions, 1);
    // The create's own transaction: its map, its mark, and A's drop.
    std::vector<Key> dropped;
    assert_true(marks.with_create(kB, [&](const std::vector<Key>& drops) {
        dropped = drops;
        store.marks.erase(kA);
        store.marks.insert(kB);
        return true;
    }));
    assert_true(dropped == std::vector<Key>{kA});
    assert_int_equal(marks.drops_pending(), 1); // B, until its layout comes
    assert_true(marks.granted(kB, 11, error));  // durable already: no transaction
    assert_int_equal(store.transactions, 1);
    assert_int_equal(marks.drops_pending(), 0);
    // A failed create changes nothing.
    marks.ended(kB);
    assert_false(marks.with_create(kA, [](const std::vector<Key>&) { return false; }));
    assert_int_equal(marks.drops_pending(), 1);
    assert_true(marks.flush(error));
    assert_true(store.marks.empty());
}

void test_ending_an_unknown_layout_changes_nothing(void**) {
    FakeStore store;
    RwGrantMarks marks(store.persist());
    marks.ended(kA);
    assert_int_equal(marks.drops_pending(), 0);
    assert_int_equal(marks.files_held(), 0);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_marked_once_before_the_first_rw_layout),
        cmocka_unit_test(test_dropped_lazily_after_the_last_layout_ended),
        cmocka_unit_test(test_a_new_layout_keeps_a_mark_waiting_to_be_dropped),
        cmocka_unit_test(test_a_store_failure_refuses_and_changes_nothing),
        cmocka_unit_test(test_a_create_marks_with_its_map_and_carries_the_drops),
        cmocka_unit_test(test_ending_an_unknown_layout_changes_nothing),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
