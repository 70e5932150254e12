// Workload for the mono-rgctx sample: generic methods instantiated with
// reference types run as shared generic code, which fetches its runtime
// generic context (rgctx) through trampolines that mono --jitmap does not list.
using System;
using System.Collections.Generic;

class Box<T> { public T V; public Box(T v) { V = v; } }

static class Prog {
    static Box<T> Wrap<T>(T x) { return new Box<T>(x); }
    static T[] Make<T>(int n, Func<int, T> g) {
        var a = new T[n];
        for (int i = 0; i < n; i++) a[i] = g(i);
        return a;
    }
    static int Count<T>(List<T> xs, Func<T, bool> f) {
        int c = 0;
        foreach (var x in xs) if (f(x)) c++;
        return c;
    }
    static void Main() {
        long s = 0;
        for (int k = 0; k < 200; k++) {
            var a = Make<string>(100, i => "w" + i);
            foreach (var x in a) s += Wrap<string>(x).V.Length;
            var l = new List<object>(a);
            s += Count<object>(l, o => o != null);
            s += Wrap<List<object>>(l).V.Count;
        }
        Console.WriteLine(s);
    }
}
