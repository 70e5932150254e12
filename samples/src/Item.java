package com.acme;

// Inlined into Inventory.total() by the JIT: its lines show up in Item.java.
final class Item {
    private final int price;
    private final int discount;

    Item(int price, int discount) {
        this.price = price;
        this.discount = discount;
    }

    long value(int count) {
        long v = (long) price * count;
        return v - (v * discount) / 100;
    }
}
