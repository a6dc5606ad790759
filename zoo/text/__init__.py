"""zoo.text"""
