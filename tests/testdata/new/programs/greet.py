#!/usr/bin/env python3
"""greet: a tiny argparse program for magi new's tests."""
import argparse

parser = argparse.ArgumentParser(prog="greet.py", description="Greet someone, a few times.")
parser.add_argument("name", help="who to greet")
parser.add_argument("extra", nargs="*", help="more names")
parser.add_argument("-n", "--times", type=int, metavar="N", default=1, help="how many times (default: 1)")
parser.add_argument("--shout", action="store_true", help="use capital letters")
parser.add_argument("--style", choices=["plain", "fancy"], default="plain", help="greeting style")
parser.add_argument("-t", "--tag", action="append", metavar="TAG", help="add a tag (can be repeated)")
args = parser.parse_args()
names = [args.name, *args.extra]
for _ in range(args.times):
    text = ("*** " if args.style == "fancy" else "") + "Hello, " + ", ".join(names)
    if args.tag:
        text += " [" + ",".join(args.tag) + "]"
    print(text.upper() if args.shout else text)
