package com.acme;

// Strings built and hashed in a hot method: the JIT compiles checksum() with C1, then
// C2, which inlines String and StringConcatHelper code (other files) into it.
public class Checksums {
    static int checksum(String name, int i) {
        String s = name + i;
        return s.hashCode() ^ s.length();
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
        long sum = 0;
        for (int r = 0; r < rounds; r++)
            sum += checksum("item", r);
        System.out.println("checksum " + sum);
    }
}
