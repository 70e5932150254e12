# Small workload for cgjit samples: a hot recursive function plus a string loop
# (the same shape as prog.js).
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def sum_squares(n):
    s = 0
    for i in range(1, n + 1):
        s += i * i
    return s


def words(n):
    return len(" ".join(("w" + str(i)).upper() + "!" for i in range(n)))


total = 0
for k in range(3):
    total += fib(15)
    total += sum_squares(2000)
    total += words(200)
print(total)
