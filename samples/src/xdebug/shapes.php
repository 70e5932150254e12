<?php
// Included by xdebug.php: the classes, so that the profile has an include and methods.
interface Shape
{
    public function area(): float;
}

abstract class Base implements Shape
{
    public function __construct(protected string $name)
    {
    }

    public function describe(): string
    {
        return sprintf("%s %.2f", $this->name, $this->area());
    }
}

final class Circle extends Base
{
    public function __construct(private float $r)
    {
        parent::__construct("circle");
    }

    public function area(): float
    {
        return M_PI * $this->r * $this->r;
    }
}

final class Rect extends Base
{
    public function __construct(private float $w, private float $h)
    {
        parent::__construct("rect");
    }

    public function area(): float
    {
        return $this->w * $this->h;
    }
}
