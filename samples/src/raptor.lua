-- raptor.lua - a RaptorJIT workload for cgjit's samples/raptorjit-traces (see its README),
-- run with `raptorjit -a audit.log raptor.lua`: a hot loop (a root trace that loops), a
-- branch that turns hot only after that loop was compiled (a side trace of it), a loop
-- that cannot be compiled (each attempt is a trace_abort in the auditlog) and a phase
-- that starts late (root traces compiled long after the first ones). Deterministic: a
-- fixed linear congruential generator, no clock.

local N = tonumber(arg and arg[1]) or 1000000

-- Phase 1: a checksum of pseudo-random numbers. The `if` is taken for one number in
-- sixteen, too rarely to be part of the loop's trace: its exit gets hot and the JIT
-- compiles a side trace for it.
local function checksum(n)
	local x, sum, odd = 4321, 0, 0
	for _ = 1, n do
		x = (x * 1103515245 + 12345) % 2147483648
		sum = (sum + x % 1000) % 1000003
		if x % 16 == 0 then
			odd = odd + x % 7
		end
	end
	return sum, odd
end

-- Phase 2: a loop that makes a closure per iteration. Creating a closure (bytecode FNEW)
-- is not compiled: each attempt to record the loop ends in a trace_abort ("NYI:
-- bytecode", TraceError 7), until the JIT gives up on it.
local function closures(n)
	local c = 0
	for i = 1, n do
		local get = function() return i % 3 end
		c = c + get()
	end
	return c
end

-- Phase 3, run once the others are over: string building and a table scan, loops the
-- JIT has not seen before, so their traces are compiled late.
local function words(n)
	local t = {}
	for i = 1, n do t[i] = string.char(97 + i % 26) .. i % 10 end
	return t
end

local function count_a(t)
	local c = 0
	for i = 1, #t do
		if t[i]:sub(1, 1) == "a" then c = c + 1 end
	end
	return c
end

local sum, odd = checksum(N)
local cl = closures(500)
local total = 0
for _ = 1, 30 do
	total = total + count_a(words(200))
end
print(string.format("sum %d odd %d closures %d total %d", sum, odd, cl, total))
