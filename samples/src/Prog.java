// Small workload for cgjit samples: hot recursive method, loop, string building.
public class Prog {
    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

    static long sumSquares(int n) {
        long s = 0;
        for (int i = 1; i <= n; i++) s += (long) i * i;
        return s;
    }

    static int words(int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) sb.append(("w" + i).toUpperCase()).append("! ");
        return sb.length();
    }

    public static void main(String[] args) {
        long total = 0;
        for (int k = 0; k < 300; k++) {
            total += fib(20);
            total += sumSquares(2000);
            total += words(200);
        }
        System.out.println(total);
    }
}
