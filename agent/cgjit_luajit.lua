-- cgjit_luajit.lua - cgjit's LuaJIT agent (docs/luajit.md): plain Lua on LuaJIT's own
-- jit.attach(fn, "trace") events, jit.util's trace inspection and the FFI. It writes
-- jit-PID.dump, a jitdump (docs/formats.md 5): one CODE_LOAD per compiled trace, with the
-- trace's machine code at its address, named "TRACE_N KIND::@file:line"; a CODE_CLOSE
-- where LuaJIT flushes every trace. Optionally /tmp/perf-PID.map too. Load it with
--   luajit -l cgjit_luajit prog.lua        (LUA_PATH must reach it), or
--   LUA_INIT=@/usr/lib/cgjit/cgjit_luajit.lua luajit prog.lua
-- Options come from $CGJIT_LUAJIT, comma-separated: dir=DIR, map, plain, verbose.
-- It never stops the program: every problem is one line on stderr and no dump.

local M = { loads = 0, traces = 0, closes = 0, aborts = 0, bytes = 0 }

local function say(fmt, ...)
	io.stderr:write("cgjit-luajit: ", string.format(fmt, ...), "\n")
end

if type(jit) ~= "table" or type(jit.attach) ~= "function" then
	say("needs LuaJIT (jit.attach, jit.util and the FFI); writing nothing")
	return M
end
-- A second copy (LUA_INIT and -l both) writes nothing: the first one's dump has it all.
local registry = debug.getregistry()
if registry.cgjit_luajit then
	say("already loaded; this copy writes nothing")
	return registry.cgjit_luajit
end
registry.cgjit_luajit = M

local ok_ffi, ffi = pcall(require, "ffi")
local ok_util, jutil = pcall(require, "jit.util")
if not ok_ffi or not ok_util then
	say("this LuaJIT lacks %s; writing nothing", ok_ffi and "jit.util" or "the FFI")
	return M
end

-- The options: "dir=DIR,map,plain,verbose". An unknown one is said and ignored: the
-- program still runs (a mistyped agent option should not stop a benchmark).
local opts = { dir = nil, map = false, plain = false, verbose = false }
for item in string.gmatch(os.getenv("CGJIT_LUAJIT") or "", "[^,]+") do
	local k, v = string.match(item, "^([%w_]+)=(.*)$")
	if k == "dir" and v ~= "" then
		opts.dir = v
	elseif item == "map" or item == "plain" or item == "verbose" then
		opts[item] = true
	else
		say("unknown option '%s' in CGJIT_LUAJIT (options: dir=DIR, map, plain, verbose)", item)
	end
end

-- Record layouts (docs/formats.md 5.1-5.3): natural alignment gives no padding here, and
-- the fields are in the host's byte order, which the magic tells a reader.
-- The libc functions get names of their own (asm redirection), so that a program that
-- declared clock_gettime or getpid itself, before or after, does not clash with these.
ffi.cdef[[
struct cgjit_lj_timespec { long tv_sec; long tv_nsec; };
int cgjit_lj_clock_gettime(int clk, struct cgjit_lj_timespec *ts) __asm__("clock_gettime");
int cgjit_lj_getpid(void) __asm__("getpid");
struct cgjit_lj_header {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
};
struct cgjit_lj_prefix { uint32_t id, total_size; uint64_t timestamp; };
struct cgjit_lj_load {
	uint32_t id, total_size; uint64_t timestamp;
	uint32_t pid, tid; uint64_t vma, code_addr, code_size, code_index;
};
]]

local CLOCK_MONOTONIC = 1  -- Linux's number, the clock of every jitdump writer (5.7)
local ELF_MACH = { x64 = 62, x86 = 3, arm64 = 183, arm = 40, ppc = 20, mips = 8,
		   mips64 = 8 }
local ts = ffi.new("struct cgjit_lj_timespec")
local pid = ffi.C.cgjit_lj_getpid()

local function now()
	ffi.C.cgjit_lj_clock_gettime(CLOCK_MONOTONIC, ts)
	return ffi.cast("uint64_t", ts.tv_sec) * 1000000000ULL + ts.tv_nsec
end

local dir = opts.dir or os.getenv("JITDUMPDIR") or "."
local path = dir .. "/jit-" .. pid .. ".dump"
-- "x": never overwrite the dump of an earlier process with the same pid (C11 fopen).
local out, err = io.open(path, "wbx")
if not out then
	say("cannot create %s: %s; writing no dump", path, tostring(err))
	return M
end
local map
if opts.map then
	local mpath = "/tmp/perf-" .. pid .. ".map"
	map, err = io.open(mpath, "wbx")
	if not map then say("cannot create %s: %s; writing no perf map", mpath, tostring(err)) end
end

local function emit(bytes)
	out:write(bytes)
	out:flush()  -- whole records only, even when the program dies without closing Lua
end

do
	local h = ffi.new("struct cgjit_lj_header")
	h.magic, h.version, h.total_size = 0x4A695444, 1, ffi.sizeof(h)
	h.elf_mach, h.pid, h.timestamp = ELF_MACH[jit.arch] or 0, pid, now()
	emit(ffi.string(h, ffi.sizeof(h)))
end
if opts.verbose then say("writing %s (%s, %s)", path, jit.version, jit.arch) end

-- Where each trace started (the "start" event has the place, "stop" has the code).
local started = {}

-- "@file" and "=name" chunks stay as they are (jitname.c takes the file after '@'); a
-- string chunk (loadstring) is named as Lua's short_src names it, [string "first line"],
-- with no control bytes (LuaJIT's own loc for it holds an address, different every run).
local function chunk_of(fi)
	local src = fi.source
	if type(src) ~= "string" then return "=[builtin]" end
	local c = string.sub(src, 1, 1)
	if c == "@" or c == "=" then return (string.gsub(src, "%c", "_")) end
	local line = string.match(src, "^[^\n]*")
	local cut = #line > 40 or #line < #src
	return '[string "' .. string.gsub(string.sub(line, 1, 40), "%c", "_") .. (cut and '..."]' or '"]')
end

local ok_vmdef, vmdef = pcall(require, "jit.vmdef")

-- A function as LuaJIT's -jv names it: a Lua function's file:line, a builtin's name.
local function func_name(func, pc)
	local fi = func and jutil.funcinfo(func, pc) or {}
	if fi.source then
		return chunk_of(fi) .. ":" .. (fi.currentline or fi.linedefined or 0)
	elseif fi.ffid then
		return ok_vmdef and vmdef.ffnames[fi.ffid] or ("builtin#" .. fi.ffid)
	end
	return fi.addr and string.format("C:%x", fi.addr) or "(?)"
end

-- LuaJIT's own -jv notation (jit/v.lua): "(3/2)" first for a side trace of trace 3 at exit
-- 2 ("(3/stitch)" for a stitched continuation), then how the trace ends: "loop", "-> 3"
-- (it jumps to root trace 3), "-> 3 tail-recursion", "stitch FUNC" (it calls FUNC, a
-- builtin, and a new trace continues after it), "interpreter" (-jv: "-- fallback to
-- interpreter"), "return", "up-recursion", ...
local function kind_of(tr, s, info, func, pc)
	local k = {}
	if s.otr then k[#k + 1] = "(" .. s.otr .. "/" .. (s.oex == -1 and "stitch" or s.oex) .. ")" end
	local link, lt = info.link, info.linktype
	if lt == "stitch" then
		k[#k + 1] = "stitch " .. func_name(func, pc)
	elseif lt == "interpreter" or link == tr or link == 0 then
		k[#k + 1] = lt
	elseif lt == "root" then
		k[#k + 1] = "-> " .. link
	else
		k[#k + 1] = "-> " .. link .. " " .. lt
	end
	return table.concat(k, " ")
end

-- One CODE_LOAD: CODE (a string) at ADDR, named NAME.
local function emit_load(addr, code, name)
	local r = ffi.new("struct cgjit_lj_load")
	r.id, r.total_size, r.timestamp = 0, ffi.sizeof(r) + #name + 1 + #code, now()
	r.pid, r.tid = pid, pid  -- LuaJIT's JIT runs in the one thread of its VM
	r.vma, r.code_addr, r.code_size = addr, addr, #code
	M.loads = M.loads + 1
	r.code_index = M.loads
	emit(ffi.string(r, ffi.sizeof(r)) .. name .. "\0" .. code)
	M.bytes = M.bytes + #code
	if map then
		map:write(string.format("%x %x %s\n", addr, #code, name))
		map:flush()
	end
end

-- On x86 and x64 a trace's exits jump to exit stubs that all traces share, in groups of
-- 32 in the mcode area (LuaJIT's asm_exitstub_gen: per exit "push imm8; jmp short" (4
-- bytes; the last one's "push" only, 2), then "push imm8", on x86 a "mov [esp], imm32",
-- and "jmp lj_vm_exit_handler").
-- jit.util.traceexitstub(N) gives stub N's address; the group's end is read from its
-- bytes, and a group whose bytes are not that shape is left out. Reset at a flush.
local stub_groups = {}
local function load_exitstubs(nexit)
	if jit.arch ~= "x64" and jit.arch ~= "x86" then return end
	for g = 0, math.floor((nexit - 1) / 32) do
		local first = jutil.traceexitstub(32 * g)
		if stub_groups[g] or not first or first < 65536 then return end
		if jutil.traceexitstub(32 * g + 31) ~= first + 31 * 4 then return end
		local p, tail = ffi.cast("const uint8_t *", first), 31 * 4 + 2
		local size
		if p[tail] == 0x6a and p[tail + 2] == 0xe9 then
			size = tail + 7
		elseif p[tail] == 0x6a and p[tail + 2] == 0xc7 and p[tail + 9] == 0xe9 then
			size = tail + 14
		else
			return
		end
		stub_groups[g] = true
		emit_load(first, ffi.string(p, size),
			  string.format("LuaJIT exit stubs %d-%d", 32 * g, 32 * g + 31))
	end
end

local function load_trace(tr, func, pc)
	local s = started[tr] or {}
	started[tr] = nil
	local mcode, addr = jutil.tracemc(tr)
	local info = jutil.traceinfo(tr)
	if not mcode or not addr or not info then return end
	load_exitstubs(info.nexit or 0)
	emit_load(addr, mcode, "TRACE_" .. tr
		  .. (opts.plain and "" or " " .. kind_of(tr, s, info, func, pc))
		  .. "::" .. func_name(s.func, s.pc))
	M.traces = M.traces + 1
end

local function close_all()
	local p = ffi.new("struct cgjit_lj_prefix")
	p.id, p.total_size, p.timestamp = 3, ffi.sizeof(p), now()
	emit(ffi.string(p, ffi.sizeof(p)))
	M.closes = M.closes + 1
end

local function on_trace(what, tr, func, pc, otr, oex)
	if what == "start" then
		started[tr] = { func = func, pc = pc, otr = otr, oex = oex }
	elseif what == "stop" then
		load_trace(tr, func, pc)
	elseif what == "abort" then
		started[tr] = nil
		M.aborts = M.aborts + 1
	elseif what == "flush" then
		started, stub_groups = {}, {}
		close_all()
	end
end

-- LuaJIT keeps one handler per event (jit.attach stores it in the registry's _VMEVENTS
-- table, by the event name's hash), so a second jit.attach(fn, "trace") would replace
-- this one, and this one a handler already there (-jv, -jdump, a profiler). So the
-- handler found there is kept and called after ours, and jit.attach is wrapped: a later
-- "trace" handler joins that list, jit.attach(fn) takes it out again.
local others = {}
local function remove_other(fn)
	for i = #others, 1, -1 do
		if others[i] == fn then table.remove(others, i) end
	end
end
local function dispatch(...)
	local ok, e = pcall(on_trace, ...)
	if not ok then say("error in a trace event: %s", tostring(e)) end
	for _, f in ipairs(others) do f(...) end
end
local attach = jit.attach
local before = {}
for k, v in pairs(registry._VMEVENTS or {}) do before[k] = v end
attach(dispatch, "trace")
for k, v in pairs(registry._VMEVENTS or {}) do
	if v == dispatch and before[k] then others[1] = before[k] end
end
jit.attach = function(fn, what, ...)
	if what == "trace" and type(fn) == "function" then
		remove_other(fn)
		others[#others + 1] = fn
		return
	end
	if what == nil then remove_other(fn) end
	return attach(fn, what, ...)
end
M.path = path

-- The summary at lua_close() (a normal end of luajit; os.exit() skips it).
if opts.verbose then
	local sentinel = newproxy(true)
	getmetatable(sentinel).__gc = function()
		say("%s: %d traces, %d exit stub groups, %d bytes of machine code, %d flushes, %d aborts",
		    path, M.traces, M.loads - M.traces, M.bytes, M.closes, M.aborts)
	end
	M.sentinel = sentinel
end

return M
