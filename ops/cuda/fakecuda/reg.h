#pragma once
#include <functional>
#include <map>
#include <string>
#include <utility>
using Invoker = std::function<void(void**)>;
std::map<std::string, Invoker>& registry();
struct Registrar {
    Registrar(std::initializer_list<std::pair<const char*, Invoker>> l) { for (auto& p : l) registry()[p.first] = p.second; }
};
template <class... A, size_t... I> void call_impl(void (*f)(A...), void** p, std::index_sequence<I...>) { f(*reinterpret_cast<std::remove_reference_t<A>*>(p[I])...); }
template <class... A> Invoker make(void (*f)(A...)) { return [f](void** p) { call_impl(f, p, std::index_sequence_for<A...>{}); }; }
