// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The data attributes of GETATTR for FLEXFILES: overlay_data_attrs puts the data files'
// size, space_used and times into a regular file's GETATTR answer from the export's
// attribute cache (core/cache/overlay.hpp has the rules), asking the data servers
// (core/mds/ds_getattr.hpp) when the cache is not fresh enough. See LAYOUT_WCC.md.
#pragma once

#include "ganesha/ganesha.hpp"
#include "model/data_files.hpp"

namespace flexfiles {
struct Export;
struct Handle;
} // namespace flexfiles

namespace flexfiles::wcc {

// GETATTR of a regular file: handle.cpp's getattrs fills the namespace attributes from the
// sub-FSAL, then this overlays what lives on the data servers (size, space_used, atime,
// mtime, ctime, and the change attribute) from the attribute cache, asking the data
// servers when the cache is too old, and sets attrs->expire_time_attr so that MDCACHE asks
// again when freshness matters. Never fails the GETATTR and never waits longer than the
// export's DS_Getattr_Deadline: without an answer the last known attributes are served.
fsal_status_t overlay_data_attrs(Export& exp, Handle& handle, const mds::DataFileMap& map,
                                 fsal_attrlist* attrs) noexcept;

// The same when the cache can answer alone: one RCU read section, no lock, no allocation,
// one load to know whether writes may be unseen (Handle::writes_unseen). False when it
// cannot (nothing cached, too old under an RW layout, the map not loaded yet): the caller
// goes on to overlay_data_attrs, which asks the data servers.
bool overlay_from_cache(Export& exp, Handle& handle, fsal_attrlist* attrs) noexcept;

// After a LAYOUT_WCC changed the cache: tells MDCACHE the file's new data attributes (the
// overlay of the cache's merged view on the namespace attributes last seen), so that the
// GETATTR that follows in the compound is answered by MDCACHE without a getattrs down to
// the sub-FSAL. Into `changed` when MDCACHE passed one down with the method (it takes them
// into the entry it holds, patch 0022), else through its update up-call. When it cannot
// say (no namespace attributes seen yet, nothing merged, the up-call refused), MDCACHE is
// told to stop trusting them instead.
void push_data_attrs_to_mdcache(Export& exp, Handle& handle, fsal_attrlist* changed) noexcept;

// Makes MDCACHE stop trusting the file's attributes (its invalidate up-call): the next
// GETATTR reaches overlay_from_cache / overlay_data_attrs.
void drop_mdcache_attrs(Export& exp, Handle& handle) noexcept;

} // namespace flexfiles::wcc
