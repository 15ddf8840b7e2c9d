// SPDX-License-Identifier: LGPL-3.0-or-later
// Which held layouts a CB_LAYOUTRECALL or CB_RECALL_ANY recalls (client/pnfs_client.hpp
// LayoutRecallTable), and the statuses the client answers with.
#include "client/pnfs_client.hpp"
#include "cmocka_cpp.hpp"

#include <cstring>

using namespace flexfiles::client;

namespace {

stateid4 layout_stateid(char tag) {
    stateid4 s{};
    s.seqid = 1;
    s.other[0] = tag;
    return s;
}

struct Recall {
    nfs_cb_argop4 op{};
    std::vector<char> fh;
    explicit Recall(uint32_t how, uint32_t iomode = LAYOUTIOMODE4_ANY,
                    uint32_t type = LAYOUT4_FLEX_FILES) {
        std::memset(&op, 0, sizeof(op));
        op.argop = NFS4_OP_CB_LAYOUTRECALL;
        CB_LAYOUTRECALL4args& a = op.nfs_cb_argop4_u.opcblayoutrecall;
        a.clora_type = static_cast<layouttype4>(type);
        a.clora_iomode = static_cast<layoutiomode4>(iomode);
        a.clora_changed = true;
        a.clora_recall.lor_recalltype = static_cast<layoutrecall_type4>(how);
    }
    Recall& file(const FileHandle& f, const stateid4& s) {
        fh = f.bytes;
        layoutrecall_file4& r =
            op.nfs_cb_argop4_u.opcblayoutrecall.clora_recall.layoutrecall4_u.lor_layout;
        r.lor_fh.nfs_fh4_len = static_cast<u_int>(fh.size());
        r.lor_fh.nfs_fh4_val = fh.data();
        r.lor_offset = 0;
        r.lor_length = NFS4_UINT64_MAX;
        r.lor_stateid = s;
        return *this;
    }
};

nfs_cb_argop4 recall_any(uint32_t keep, uint32_t mask) {
    nfs_cb_argop4 op;
    std::memset(&op, 0, sizeof(op));
    op.argop = NFS4_OP_CB_RECALL_ANY;
    op.nfs_cb_argop4_u.opcbrecall_any.craa_objects_to_keep = keep;
    op.nfs_cb_argop4_u.opcbrecall_any.craa_type_mask.bitmap4_len = 1;
    op.nfs_cb_argop4_u.opcbrecall_any.craa_type_mask.map[0] = mask;
    return op;
}

const FileHandle kA{{1, 1, 1}};
const FileHandle kB{{2, 2, 2, 2}};

void test_layoutrecall_file(void**) {
    LayoutRecallTable t;
    auto a = t.add(kA);
    auto b = t.add(kB);
    std::vector<FileHandle> got;

    // Nothing held yet: no matching layout.
    assert_int_equal(t.handle(Recall(LAYOUTRECALL4_ALL).op, got), NFS4ERR_NOMATCHING_LAYOUT);
    t.set_layout(*a, layout_stateid('a'), LAYOUTIOMODE4_RW);
    t.set_layout(*b, layout_stateid('b'), LAYOUTIOMODE4_READ);

    // FILE: the right filehandle with another layout stateid does not match.
    assert_int_equal(t.handle(Recall(LAYOUTRECALL4_FILE).file(kA, layout_stateid('b')).op, got),
                     NFS4ERR_NOMATCHING_LAYOUT);
    // Another file's stateid with this file's fh neither.
    assert_int_equal(t.handle(Recall(LAYOUTRECALL4_FILE).file(kB, layout_stateid('a')).op, got),
                     NFS4ERR_NOMATCHING_LAYOUT);
    // The wrong iomode.
    assert_int_equal(
        t.handle(Recall(LAYOUTRECALL4_FILE, LAYOUTIOMODE4_READ).file(kA, layout_stateid('a')).op,
                 got),
        NFS4ERR_NOMATCHING_LAYOUT);
    // Another layout type.
    assert_int_equal(t.handle(Recall(LAYOUTRECALL4_FILE, LAYOUTIOMODE4_ANY, LAYOUT4_NFSV4_1_FILES)
                                  .file(kA, layout_stateid('a'))
                                  .op,
                              got),
                     NFS4ERR_NOMATCHING_LAYOUT);
    assert_false(a->recalled || b->recalled);
    assert_true(got.empty());

    // The match: only that file is recalled (a newer seqid still names the layout).
    stateid4 newer = layout_stateid('a');
    newer.seqid = 5;
    assert_int_equal(t.handle(Recall(LAYOUTRECALL4_FILE, LAYOUTIOMODE4_RW).file(kA, newer).op, got),
                     NFS4_OK);
    assert_true(a->recalled);
    assert_false(b->recalled);
    assert_int_equal(t.stateid(*a).seqid, 5); // LAYOUTRETURN answers with the recall's stateid
    assert_int_equal(got.size(), 1);
    assert_true(got[0] == kA);

    // Returning the layout clears the mark; a new layout is not recalled.
    t.clear_layout(*a);
    assert_false(a->recalled);
    t.set_layout(*a, layout_stateid('c'), LAYOUTIOMODE4_RW);
    assert_false(a->recalled);
    assert_int_equal(t.layout_recalls(), 6);
}

void test_layoutrecall_fsid_all(void**) {
    LayoutRecallTable t;
    auto a = t.add(kA);
    auto b = t.add(kB);
    auto c = t.add(FileHandle{{3}}); // opened, no layout
    t.set_layout(*a, layout_stateid('a'), LAYOUTIOMODE4_RW);
    t.set_layout(*b, layout_stateid('b'), LAYOUTIOMODE4_READ);
    std::vector<FileHandle> got;
    assert_int_equal(t.handle(Recall(LAYOUTRECALL4_FSID, LAYOUTIOMODE4_READ).op, got), NFS4_OK);
    assert_false(a->recalled);
    assert_true(b->recalled);
    assert_int_equal(t.handle(Recall(LAYOUTRECALL4_ALL).op, got), NFS4_OK);
    assert_true(a->recalled && b->recalled);
    assert_false(c->recalled);
    assert_int_equal(got.size(), 3); // b, then a and b
    // A recall type that does not exist.
    assert_int_equal(t.handle(Recall(9).op, got), NFS4ERR_NOMATCHING_LAYOUT);
    // Removed files are never matched.
    t.remove(a);
    t.remove(b);
    got.clear();
    assert_int_equal(t.handle(Recall(LAYOUTRECALL4_ALL).op, got), NFS4ERR_NOMATCHING_LAYOUT);
}

void test_recall_any(void**) {
    LayoutRecallTable t;
    std::vector<std::shared_ptr<LayoutRecallTable::Entry>> files;
    for (char i = 0; i < 4; ++i) {
        files.push_back(t.add(FileHandle{{i}}));
        t.set_layout(*files.back(), layout_stateid(i), LAYOUTIOMODE4_RW);
    }
    std::vector<FileHandle> got;
    // Only delegations asked for: nothing to do, but NFS4_OK.
    assert_int_equal(t.handle(recall_any(0, 1u << RCA4_TYPE_MASK_RDATA_DLG), got), NFS4_OK);
    assert_true(got.empty());
    // Flex-files layouts, keep 1: three recalled.
    assert_int_equal(t.handle(recall_any(1, 1u << RCA4_TYPE_MASK_FF_LAYOUT_MIN), got), NFS4_OK);
    assert_int_equal(got.size(), 3);
    int recalled = 0;
    for (const auto& f : files) {
        recalled += f->recalled ? 1 : 0;
    }
    assert_int_equal(recalled, 3);
    // Again, keep 0: the last one too.
    got.clear();
    assert_int_equal(t.handle(recall_any(0, 1u << RCA4_TYPE_MASK_FF_LAYOUT_MAX), got), NFS4_OK);
    assert_int_equal(got.size(), 1);
    assert_int_equal(t.recall_any_calls(), 3);
}

void test_other_ops(void**) {
    LayoutRecallTable t;
    nfs_cb_argop4 op;
    std::memset(&op, 0, sizeof(op));
    op.argop = NFS4_OP_CB_GETATTR;
    std::vector<FileHandle> got;
    assert_int_equal(t.handle(op, got), NFS4ERR_NOTSUPP);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layoutrecall_file),
        cmocka_unit_test(test_layoutrecall_fsid_all),
        cmocka_unit_test(test_recall_any),
        cmocka_unit_test(test_other_ops),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
