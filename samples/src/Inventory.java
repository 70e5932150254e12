package com.acme;

import java.util.ArrayList;
import java.util.List;

// The sample for cgjit's JVMTI agent (samples/java-jvmti, tests/e2e/jvmti.sh): total()
// is the hot method that the JIT compiles; Item.value() (another file) is inlined into it.
public class Inventory {
    static long total(List<Item> items, int[] counts) {
        long sum = 0;
        for (int i = 0; i < counts.length; i++) {
            Item it = items.get(i);
            sum += it.value(counts[i]);
        }
        return sum;
    }

    public static void main(String[] args) {
        int n = 1000, rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3000;
        List<Item> items = new ArrayList<>();
        int[] counts = new int[n];
        for (int i = 0; i < n; i++) {
            items.add(new Item(i % 17 + 1, i % 5));
            counts[i] = i % 7;
        }
        long grand = 0;
        for (int r = 0; r < rounds; r++) {
            grand += total(items, counts);
        }
        System.out.println("total " + grand);
    }
}
